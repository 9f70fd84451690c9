"""A small client for the OCI registry that receives release bundles."""

from __future__ import annotations

import time
from dataclasses import dataclass

import httpx

RETRIES = 3


@dataclass
class RegistryClient:
    base_url: str
    token: str

    def push(self, name: str, tag: str, payload: bytes) -> str:
        """Upload one bundle and return its digest; retries on 5xx with backoff."""
        url = f"{self.base_url}/v2/{name}/blobs/uploads/?tag={tag}"
        headers = {"Authorization": f"Bearer {self.token}"}
        for attempt in range(RETRIES):
            response = httpx.post(url, content=payload, headers=headers, timeout=60)
            if response.status_code < 500:
                response.raise_for_status()
                return response.headers["Docker-Content-Digest"]
            time.sleep(2**attempt)
        response.raise_for_status()
        raise RuntimeError("unreachable")

    def promote(self, name: str, digest: str, channel: str) -> None:
        """Point a channel tag (stable, beta) at an uploaded digest."""
        url = f"{self.base_url}/v2/{name}/manifests/{channel}"
        headers = {"Authorization": f"Bearer {self.token}"}
        httpx.put(url, json={"digest": digest}, headers=headers, timeout=30).raise_for_status()
