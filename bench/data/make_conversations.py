"""Write `conversations.json`: a vault of chats and notes, and questions about them.

Lena keeps a memory vault of her chats with eight people close to her, one memory per
turn, from January to November 2025, and of short notes she wrote about them. Some
notes are pinned, and some are corrections of something said earlier. The questions
are what she might ask her agent months later, worded as people ask: a question names
the person (or "my sister") and what Lena remembers of the event, in the everyday word
for it ("the interview", "the flights to Lisbon", "the pierogi"), and asks for what she
does not remember, which the chat may say in other words or in a later turn. Each
ask has a plainer and a more paraphrased wording, and nothing in a question points at
something it does not name ("that show", "it"). Each question names the memories
that answer it.

Everything here is written by hand for this project (people, events, phrasings); a
seeded random generator only chooses who lives through which event, when, in which
words, and which small talk surrounds it. Run it again and it writes the same file:

    python -m bench.data.make_conversations
"""

from __future__ import annotations

import datetime as dt
import json
import random
import re
from dataclasses import dataclass, field
from pathlib import Path

SEED = 2025
OUT = Path(__file__).with_name("conversations.json")
OWNER = "Lena"
ID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz"


@dataclass(frozen=True)
class Person:
    name: str
    relation: str  # how Lena speaks of them: "my brother"
    sub: str  # he / she
    obj: str  # him / her
    pos: str  # his / her


PEOPLE = (
    Person("Marek", "my brother", "he", "him", "his"),
    Person("Ines", "my sister", "she", "her", "her"),
    Person("Samira", "my best friend", "she", "her", "her"),
    Person("Joost", "my colleague", "he", "him", "his"),
    Person("Felix", "my partner", "he", "him", "his"),
    Person("Rut", "my grandmother", "she", "her", "her"),
    Person("Teodor", "my neighbour", "he", "him", "his"),
    Person("Priya", "my climbing partner", "she", "her", "her"),
)


@dataclass(frozen=True)
class Turn:
    speaker: str  # "them" or "lena"
    texts: tuple[str, ...]  # one is chosen
    facet: str | None = None  # what this turn answers: "main", "detail", "extra"


@dataclass(frozen=True)
class Ask:
    kind: str  # paraphrase, when, said
    texts: tuple[str, ...]
    facets: tuple[str, ...]


@dataclass(frozen=True)
class EventType:
    key: str
    instances: tuple[dict[str, str], ...]
    turns: tuple[Turn, ...]
    asks: tuple[Ask, ...]
    who: str  # "adopted a {species}": names the person in a two-hop question
    who_facet: str
    what: str  # a question about them, with {sub}/{pos}
    what_facet: str


def T(speaker: str, *texts: str, facet: str | None = None) -> Turn:
    return Turn(speaker, texts, facet)


def A(kind: str, *texts: str, facets: tuple[str, ...] = ("main",)) -> Ask:
    return Ask(kind, texts, facets)


EVENTS: tuple[EventType, ...] = (
    EventType(
        "job",
        (
            dict(
                place="Kornblume bakery",
                role="head baker",
                day="first of April",
                perk="free bread every Friday",
            ),
            dict(
                place="the city archive",
                role="digitisation assistant",
                day="third of March",
                perk="a desk by the window",
            ),
            dict(
                place="Halvorsen Studio",
                role="junior architect",
                day="twelfth of May",
                perk="every second Friday off",
            ),
            dict(
                place="the harbour ferry company",
                role="ticket office supervisor",
                day="second of June",
                perk="free crossings for family",
            ),
            dict(
                place="a small climbing gym in Ostend",
                role="route setter",
                day="ninth of September",
                perk="a free membership",
            ),
        ),
        (
            T(
                "them",
                "I got it!! They called an hour ago, I start at {place} on the {day}.",
                "Big news: {place} offered me the job. Starting the {day}!",
                facet="main",
            ),
            T(
                "lena",
                "WHAT. Congratulations!! As what, in the end?",
                "Oh that's brilliant. Which role did they give you?",
            ),
            T(
                "them",
                "{role}. The second interview was brutal, they made me walk them through "
                "my whole portfolio.",
                "{role}. Honestly the second interview nearly broke me, three people "
                "firing questions.",
                facet="detail",
            ),
            T("them", "And the best bit: {perk}.", "Also, {perk}. I could cry.", facet="extra"),
            T(
                "lena",
                "You deserve it. Drinks on me this weekend.",
                "We are celebrating, no arguments.",
            ),
        ),
        (
            A(
                "paraphrase",
                "Where is {ref} working now?",
                "Where did {ref} get the new job?",
                "Who offered {ref} a job this year?",
            ),
            A(
                "when",
                "When did {ref} get the job at {place}?",
                "When did {ref} tell me about the new job?",
            ),
            A(
                "said",
                "What did {ref} say about the interview?",
                "What did {ref} tell me about the job interviews?",
                facets=("detail",),
            ),
            A(
                "paraphrase",
                "What perk comes with {ref}'s new job?",
                "Does {ref}'s new employer give any bonus or benefit?",
                facets=("extra",),
            ),
        ),
        "got hired at {place}",
        "main",
        "what title do they have at the new job?",
        "detail",
    ),
    EventType(
        "pet",
        (
            dict(species="greyhound", kind="dog", name="Biscuit", age="four", habit="steals socks"),
            dict(
                species="tabby cat", kind="cat", name="Pilot", age="two", habit="sleeps in the sink"
            ),
            dict(
                species="border collie",
                kind="dog",
                name="Juno",
                age="one",
                habit="herds the vacuum cleaner",
            ),
            dict(
                species="pair of rabbits",
                kind="pair of bunnies",
                name="Mo and Fritz",
                age="six months",
                habit="chew every cable",
            ),
            dict(
                species="senior beagle",
                kind="dog",
                name="Captain",
                age="nine",
                habit="howls at the tram",
            ),
        ),
        (
            T(
                "them",
                "We went to the shelter on Saturday just to look and came home with a "
                "{species}. Oops.",
                "So... we adopted a {species} from the rescue place yesterday.",
                facet="main",
            ),
            T(
                "lena",
                "Of course you did. Pictures please! What's the name?",
                "A {kind}!! I need photos immediately.",
            ),
            T(
                "them",
                "{name}. The shelter said about {age} years old.",
                "We're calling them {name}. Around {age} years old, the vet thinks.",
                facet="detail",
            ),
            T(
                "them",
                "Already learned that {name} {habit}.",
                "Small problem: {name} {habit}.",
                facet="extra",
            ),
        ),
        (
            A(
                "paraphrase",
                "What pet did {ref} adopt?",
                "Which kind of pet did {ref} bring home from the shelter?",
                "What animal did {ref} bring home from the rescue?",
            ),
            A(
                "when",
                "When did {ref} get the new pet?",
                "When was it that {ref} adopted a {kind}?",
            ),
            A(
                "paraphrase",
                "What's the name of {ref}'s new {kind}?",
                "How old is the pet {ref} adopted, and what is it called?",
                facets=("detail",),
            ),
            A(
                "said",
                "What did {ref} say {name} gets up to?",
                "What bad habit did {ref} mention about the new {kind}?",
                facets=("extra",),
            ),
        ),
        "adopted a {species}",
        "main",
        "what did they name their new pet?",
        "detail",
    ),
    EventType(
        "trip",
        (
            dict(
                place="Lisbon",
                month="October",
                stay="a tiny flat above a tile shop",
                sight="the tram up to the castle",
            ),
            dict(
                place="the Faroe Islands",
                month="July",
                stay="a turf-roofed guesthouse",
                sight="the puffin cliffs",
            ),
            dict(
                place="Kyoto",
                month="April",
                stay="a ryokan with paper walls",
                sight="the bamboo forest at dawn",
            ),
            dict(
                place="Sicily",
                month="September",
                stay="an agriturismo between lemon trees",
                sight="Mount Etna",
            ),
            dict(
                place="Tromsø",
                month="February",
                stay="a cabin with a glass roof",
                sight="the northern lights",
            ),
        ),
        (
            T(
                "them",
                "Flights are booked! {place} in {month}, finally.",
                "Just paid for the tickets: we're going to {place} in {month}.",
                facet="main",
            ),
            T(
                "lena",
                "So jealous. Where are you sleeping?",
                "Amazing, I've always wanted to go. Hotel or something weirder?",
            ),
            T(
                "them",
                "We found {stay}. Looks unreal in the photos.",
                "{stay}, if the photos are honest.",
                facet="detail",
            ),
            T(
                "them",
                "The one thing I really want to see is {sight}.",
                "Top of the list: {sight}.",
                facet="extra",
            ),
        ),
        (
            A(
                "paraphrase",
                "Where is {ref} going on holiday?",
                "What's {ref}'s travel destination this year?",
                "Where is {ref} flying to this year?",
            ),
            A(
                "when",
                "When did {ref} book the flights to {place}?",
                "When is {ref} travelling, and when did they tell me?",
            ),
            A(
                "said",
                "Where is {ref} staying in {place}?",
                "What did {ref} say about the accommodation on the trip?",
                facets=("detail",),
            ),
            A(
                "said",
                "What does {ref} most want to see in {place}?",
                "What does {ref} most want to see on the trip?",
                facets=("extra",),
            ),
        ),
        "booked a trip to {place}",
        "main",
        "where are they staying on their trip?",
        "detail",
    ),
    EventType(
        "injury",
        (
            dict(
                part="ankle",
                activity="bouldering",
                rest="three weeks",
                treat="a brace that squeaks",
            ),
            dict(
                part="wrist",
                activity="the ice rink",
                rest="a month",
                treat="a cast my nephew drew a shark on",
            ),
            dict(
                part="knee",
                activity="five-a-side football",
                rest="six weeks",
                treat="physio twice a week",
            ),
            dict(
                part="shoulder",
                activity="moving a wardrobe",
                rest="two weeks",
                treat="a sling and painkillers",
            ),
            dict(
                part="back",
                activity="gardening",
                rest="ten days",
                treat="a heat pad and a lot of complaining",
            ),
        ),
        (
            T(
                "them",
                "Bad news, I hurt my {part} at {activity} last night.",
                "Ugh. Did something to my {part} at {activity}. It's swollen like a melon.",
                facet="main",
            ),
            T("lena", "Oh no! Is it broken?", "Ouch. Did you get it looked at?"),
            T(
                "them",
                "Not broken, but the doctor says nothing strenuous for {rest}.",
                "Sprained. Doctor wants me off it for {rest}.",
                facet="detail",
            ),
            T("them", "So now I have {treat}.", "I'm stuck with {treat}.", facet="extra"),
        ),
        (
            A("paraphrase", "How did {ref} get injured?", "What did {ref} hurt, and how?"),
            A("when", "When did {ref} get injured?", "When was {ref}'s {part} injury?"),
            A(
                "paraphrase",
                "How long did the doctor tell {ref} to rest?",
                "How long is {ref} out of action?",
                facets=("detail",),
            ),
            A(
                "said",
                "What did {ref} say about the treatment for the {part}?",
                "What did {ref} say about the treatment?",
                facets=("extra",),
            ),
        ),
        "got injured doing {activity}",
        "main",
        "how long do they have to rest after the injury?",
        "detail",
    ),
    EventType(
        "gift",
        (
            dict(
                for_="Oma's eightieth",
                hobby="crosswords",
                gift="a leather-bound puzzle book with her name on it",
            ),
            dict(
                for_="our cousin's graduation",
                hobby="film photography",
                gift="a second-hand Olympus camera",
            ),
            dict(for_="the neighbours' anniversary", hobby="jazz", gift="a vinyl of Kind of Blue"),
            dict(for_="my boss leaving", hobby="hiking", gift="a framed trail map of the Alps"),
            dict(
                for_="little Noor's birthday",
                hobby="dinosaurs",
                gift="a glow-in-the-dark T. rex skeleton kit",
            ),
        ),
        (
            T(
                "them",
                "Help, I have no idea what to get for {for_}. Anything with {hobby}?",
                "I'm stuck on a present for {for_}. They love {hobby}.",
                facet="main",
            ),
            T("lena", "Hmm, something personal? Not another mug.", "Go handmade or go home."),
            T(
                "them",
                "Sorted it! Got {gift}.",
                "Update: I ended up buying {gift}. Wrapped and everything.",
                facet="detail",
            ),
        ),
        (
            A(
                "paraphrase",
                "What present did {ref} buy in the end?",
                "What gift did {ref} get for {for_}?",
                facets=("detail",),
            ),
            A(
                "when",
                "When was {ref} looking for a present?",
                "When was {ref} shopping for a gift for {for_}?",
                facets=("main", "detail"),
            ),
            A(
                "said",
                "What did {ref} say the person receiving the gift is into?",
                "What hobby did {ref} mention for the present for {for_}?",
            ),
        ),
        "was shopping for a present for {for_}",
        "main",
        "what present did they end up buying?",
        "detail",
    ),
    EventType(
        "move",
        (
            dict(area="Linden", floor="fourth", view="the old water tower", catch="no elevator"),
            dict(
                area="the harbour quarter",
                floor="ground",
                view="a courtyard with a fig tree",
                catch="the trains at night",
            ),
            dict(
                area="Westend",
                floor="top",
                view="half the city",
                catch="a landlord who texts at midnight",
            ),
            dict(
                area="a village outside Gent",
                floor="only",
                view="cow fields",
                catch="one bus an hour",
            ),
            dict(
                area="the university district",
                floor="second",
                view="a bakery's back door",
                catch="students singing at 3am",
            ),
        ),
        (
            T(
                "them",
                "We signed the lease! New flat in {area}.",
                "It's official, we're moving to {area} next month.",
                facet="main",
            ),
            T("lena", "Yay! Which floor? Tell me there's a view.", "Finally. Is it nice?"),
            T(
                "them",
                "{floor} floor, and the window looks out over {view}.",
                "We're on the {floor} floor with a view of {view}.",
                facet="detail",
            ),
            T(
                "them",
                "Only downside: {catch}.",
                "The catch is {catch}, but we'll live.",
                facet="extra",
            ),
        ),
        (
            A(
                "paraphrase",
                "Where did {ref} move to?",
                "Which neighbourhood did {ref} relocate to?",
                "Where is {ref}'s new home?",
            ),
            A("when", "When did {ref} sign the lease?", "When did {ref} sign for the new place?"),
            A(
                "paraphrase",
                "What can you see from {ref}'s window at the new flat?",
                "Which floor is {ref}'s new flat on?",
                facets=("detail",),
            ),
            A(
                "said",
                "What's the downside of {ref}'s new flat?",
                "Did {ref} complain about anything at the new address?",
                facets=("extra",),
            ),
        ),
        "moved to {area}",
        "main",
        "what's the downside of their new flat?",
        "extra",
    ),
    EventType(
        "course",
        (
            dict(
                course="pottery",
                day="Tuesday",
                teacher="a retired sculptor called Hanne",
                strict="never wasting clay",
            ),
            dict(
                course="Portuguese",
                day="Thursday",
                teacher="Duarte, who only speaks Portuguese in class",
                strict="no phones",
            ),
            dict(
                course="life drawing",
                day="Monday",
                teacher="a very serious woman called Ilse",
                strict="charcoal only",
            ),
            dict(
                course="woodworking",
                day="Wednesday",
                teacher="an old carpenter named Bram",
                strict="counting your fingers after class",
            ),
            dict(
                course="salsa",
                day="Friday",
                teacher="a couple from Cali",
                strict="always switching partners",
            ),
        ),
        (
            T(
                "them",
                "I did a thing: signed up for a {course} class, {day} evenings.",
                "Starting a {course} course! Every {day} night.",
                facet="main",
            ),
            T("lena", "Love that for you. Who's teaching?", "Ha, you? Tell me more."),
            T("them", "It's {teacher}.", "The teacher is {teacher}.", facet="detail"),
            T(
                "them",
                "Very strict about {strict}.",
                "There's a rule about {strict}, which I broke in week one.",
                facet="extra",
            ),
        ),
        (
            A(
                "paraphrase",
                "What class did {ref} sign up for?",
                "Which hobby class did {ref} enrol in?",
                "What evening lessons is {ref} taking?",
            ),
            A(
                "when",
                "When did {ref} sign up for the {course} class?",
                "When did {ref} start the evening class?",
            ),
            A(
                "said",
                "Who teaches {ref}'s {course} class?",
                "What did {ref} say about the instructor?",
                facets=("detail",),
            ),
            A(
                "said",
                "What is {ref}'s {course} teacher strict about?",
                "What rules does {ref}'s teacher insist on?",
                facets=("extra",),
            ),
        ),
        "takes a {course} class",
        "main",
        "who teaches their {course} class?",
        "detail",
    ),
    EventType(
        "book",
        (
            dict(
                book="The Salt Orchard",
                author="Mira Castell",
                about="a family of beekeepers hiding a stolen painting",
            ),
            dict(
                book="Northbound",
                author="Tomas Reyl",
                about="two brothers walking from Spain to Norway",
            ),
            dict(
                book="Small Hours",
                author="Agnes Whitlow",
                about="a night nurse who starts hearing her patients' memories",
            ),
            dict(
                book="The Ledger of Gulls",
                author="Piet Vanmol",
                about="a lighthouse keeper's diary during the war",
            ),
            dict(
                book="Glass Weather",
                author="Rana Oduya",
                about="a town where it rains only on Sundays",
            ),
        ),
        (
            T(
                "them",
                "You HAVE to read {book}. I finished it at 2am.",
                "Reading tip: {book}. I can't stop thinking about it.",
                facet="main",
            ),
            T("lena", "What's it about?", "Adding it to the pile. Who wrote it?"),
            T(
                "them",
                "It's by {author}, about {about}.",
                "{author}. It's about {about}, sounds odd but trust me.",
                facet="detail",
            ),
        ),
        (
            A(
                "paraphrase",
                "Which book did {ref} tell me I have to read?",
                "Which novel did {ref} recommend to me?",
            ),
            A(
                "said",
                "Who wrote {book}, the book {ref} recommended?",
                "What is {book} about, according to {ref}?",
                "Who is the author of the story {ref} raved about?",
                facets=("detail",),
            ),
            A("when", "When did {ref} recommend {book}?", "When did {ref} tell me to read {book}?"),
        ),
        "recommended {book}",
        "main",
        "who wrote the book they recommended?",
        "detail",
    ),
    EventType(
        "concert",
        (
            dict(
                band="the Velvet Tides", venue="the Paradiso", moment="they played the encore twice"
            ),
            dict(
                band="Oumou Sangaré",
                venue="an open-air stage in the park",
                moment="it poured and nobody left",
            ),
            dict(
                band="a tiny folk trio from Galway",
                venue="the back room of a pub",
                moment="the fiddler's string snapped mid-song",
            ),
            dict(
                band="the city orchestra",
                venue="the cathedral",
                moment="the organ made the floor shake",
            ),
            dict(
                band="Hollow Pines",
                venue="the old tram depot",
                moment="the singer crowd-surfed in a wheelchair",
            ),
        ),
        (
            T(
                "them",
                "Guess who got tickets for {band}!",
                "Me. Front row. {band}. Tonight.",
                facet="main",
            ),
            T("lena", "Shut up. Where?", "Jealous. Where's the gig?"),
            T("them", "At {venue}.", "{venue}, of all places.", facet="detail"),
            T(
                "them",
                "Best night of the year: {moment}.",
                "You won't believe it, {moment}.",
                facet="extra",
            ),
        ),
        (
            A(
                "paraphrase",
                "Which band did {ref} see live?",
                "Which band did {ref} get tickets for?",
            ),
            A(
                "paraphrase",
                "Where did {ref} see {band}?",
                "Where was the gig {ref} went to?",
                facets=("detail",),
            ),
            A(
                "said",
                "What did {ref} say was the best moment of the {band} concert?",
                "What was the highlight of the concert {ref} went to?",
                facets=("extra",),
            ),
            A(
                "when",
                "When did {ref} go to see {band}?",
                "When did {ref} get the concert tickets?",
            ),
        ),
        "saw {band} live",
        "main",
        "where was the concert they went to?",
        "detail",
    ),
    EventType(
        "vehicle",
        (
            dict(
                thing="a cargo bike",
                model="a Dutch one with a wooden box",
                colour="mint green",
                bonus="a rain cover",
            ),
            dict(
                thing="an old Volvo estate",
                model="a 1994 240",
                colour="dark blue",
                bonus="a roof box",
            ),
            dict(
                thing="an electric scooter",
                model="a folding one",
                colour="matte black",
                bonus="a spare battery",
            ),
            dict(
                thing="a campervan",
                model="a converted Transit",
                colour="orange",
                bonus="a little gas stove",
            ),
            dict(
                thing="a road bike",
                model="a steel Colnago from the eighties",
                colour="red",
                bonus="clip-in pedals",
            ),
        ),
        (
            T(
                "them",
                "Done it, bought {thing}! {model}.",
                "So I finally bought {thing}. It's {model}.",
                facet="main",
            ),
            T("lena", "Ooh, what colour?", "Nice, new or used?"),
            T(
                "them",
                "Used, {colour}, and the seller threw in {bonus}.",
                "{colour}! He gave me {bonus} too.",
                facet="detail",
            ),
        ),
        (
            A(
                "paraphrase",
                "What did {ref} buy to get around?",
                "What's {ref}'s new way of getting about town?",
                "What vehicle did {ref} buy?",
            ),
            A(
                "paraphrase",
                "What colour is {ref}'s new {thing_n}?",
                "What extra came with {ref}'s {thing_n}?",
                facets=("detail",),
            ),
            A("when", "When did {ref} buy the {thing_n}?", "When did {ref} buy the vehicle?"),
        ),
        "bought {thing}",
        "main",
        "what colour is the {thing_n} they bought?",
        "detail",
    ),
    EventType(
        "recipe",
        (
            dict(dish="pierogi", whose="Oma Rut's", trick="freezing them before boiling"),
            dict(
                dish="shakshuka",
                whose="my flatmate's",
                trick="a spoon of harissa and a pinch of cumin",
            ),
            dict(dish="sourdough", whose="an old baker's", trick="a starter fed with rye flour"),
            dict(
                dish="lamb tagine",
                whose="my aunt's",
                trick="dried apricots and a whole cinnamon stick",
            ),
            dict(dish="ramen broth", whose="a YouTube chef's", trick="charring the onions first"),
        ),
        (
            T(
                "them",
                "Made {dish} for the first time tonight, using {whose} recipe.",
                "Tried {whose} {dish} recipe. Not bad for a first go!",
                facet="main",
            ),
            T("lena", "Okay but what's the secret?", "Share the recipe or it didn't happen."),
            T(
                "them",
                "The trick is {trick}.",
                "Secret is {trick}. Don't tell anyone.",
                facet="detail",
            ),
        ),
        (
            A(
                "paraphrase",
                "What did {ref} cook for the first time?",
                "What did {ref} try making in the kitchen?",
            ),
            A(
                "said",
                "What's the trick to {ref}'s {dish}?",
                "What tip did {ref} give for the recipe?",
                facets=("detail",),
            ),
            A(
                "when",
                "When did {ref} make {dish} for the first time?",
                "When did {ref} first cook {dish}?",
            ),
        ),
        "cooked {dish}",
        "main",
        "what's their trick for the {dish}?",
        "detail",
    ),
    EventType(
        "exam",
        (
            dict(exam="the driving test", score="only two minor faults", hard="parallel parking"),
            dict(exam="the C1 German exam", score="89 out of 100", hard="the oral part"),
            dict(exam="the sommelier level one", score="a distinction", hard="the blind tasting"),
            dict(
                exam="the lifeguard certificate",
                score="the fastest time in the group",
                hard="the brick dive",
            ),
            dict(
                exam="the project management certification",
                score="82 percent",
                hard="the risk questions",
            ),
        ),
        (
            T("them", "I PASSED {exam}!!", "Results are in, I passed {exam}.", facet="main"),
            T("lena", "Knew you would! How did it go?", "Yesss! Was it hard?"),
            T(
                "them",
                "Got {score}. {hard} nearly killed me though.",
                "{score}! The worst part was {hard}.",
                facet="detail",
            ),
        ),
        (
            A(
                "paraphrase",
                "Which exam did {ref} pass?",
                "Which test did {ref} succeed at?",
                "What qualification did {ref} earn?",
            ),
            A(
                "said",
                "What did {ref} find hardest in {exam}?",
                "What score did {ref} get in {exam}?",
                facets=("detail",),
            ),
            A("when", "When did {ref} pass {exam}?", "When did {ref} get the exam results?"),
        ),
        "passed {exam}",
        "main",
        "what did they find hardest in the exam?",
        "detail",
    ),
    EventType(
        "race",
        (
            dict(
                race="the Berlin half marathon",
                month="April",
                goal="under 1:50",
                train="intervals on Wednesdays",
            ),
            dict(
                race="a 10k along the river",
                month="June",
                goal="under 50 minutes",
                train="a running club on Sundays",
            ),
            dict(
                race="the Amsterdam marathon",
                month="October",
                goal="just finishing",
                train="a 16-week plan on the fridge",
            ),
            dict(
                race="a trail race in the Ardennes",
                month="May",
                goal="not getting lost",
                train="hill repeats",
            ),
            dict(
                race="the Rotterdam 5k",
                month="March",
                goal="beating my dad",
                train="running to work",
            ),
        ),
        (
            T(
                "them",
                "Signed up for {race} in {month}. Terrified.",
                "It's done, I'm registered for {race}, {month}.",
                facet="main",
            ),
            T("lena", "You'll smash it. Target time?", "What's the goal?"),
            T("them", "Aiming for {goal}.", "Honestly {goal}.", facet="detail"),
            T("them", "Training is {train}.", "I'm doing {train}, my legs hate me.", facet="extra"),
        ),
        (
            A(
                "paraphrase",
                "Which race did {ref} sign up for?",
                "Which running event did {ref} enter?",
                "What race is {ref} training for?",
            ),
            A(
                "paraphrase",
                "What's {ref}'s target time for {race}?",
                "What's {ref}'s target for the race?",
                facets=("detail",),
            ),
            A(
                "said",
                "How is {ref} training for {race}?",
                "How is {ref} preparing for the run?",
                facets=("extra",),
            ),
            A(
                "when",
                "When did {ref} sign up for {race}?",
                "When did {ref} register for the race?",
            ),
        ),
        "signed up for {race}",
        "main",
        "what time are they aiming for in the race?",
        "detail",
    ),
    EventType(
        "repair",
        (
            dict(
                broke="the washing machine",
                damage="flooded the kitchen",
                cost="340 euros",
                fixer="a plumber called Dirk",
            ),
            dict(
                broke="the boiler",
                damage="left us without hot water for three days",
                cost="a horrifying 900 euros",
                fixer="the landlord's cousin",
            ),
            dict(
                broke="the bathroom ceiling",
                damage="dripped onto the toilet",
                cost="about 500",
                fixer="the neighbours' handyman",
            ),
            dict(
                broke="the car's clutch",
                damage="died at a roundabout",
                cost="1,200 euros",
                fixer="the garage on Ringstraat",
            ),
            dict(
                broke="the laptop screen",
                damage="went black during a call",
                cost="260",
                fixer="a repair shop by the station",
            ),
        ),
        (
            T(
                "them",
                "Worst morning. {broke} {damage}.",
                "Disaster: {broke} broke and {damage}.",
                facet="main",
            ),
            T("lena", "Noooo. Can it be fixed?", "Oh god. What now?"),
            T(
                "them",
                "{fixer} is coming, it's going to cost {cost}.",
                "Getting it fixed by {fixer}, {cost}.",
                facet="detail",
            ),
        ),
        (
            A("paraphrase", "What broke at {ref}'s place?", "What stopped working for {ref}?"),
            A(
                "paraphrase",
                "How much did {ref} pay to fix {broke}?",
                "Who came to fix {broke} for {ref}?",
                facets=("detail",),
            ),
            A(
                "when",
                "When did {ref}'s {broke_n} break down?",
                "When did {ref} have the trouble with {broke}?",
            ),
        ),
        "had {broke} break",
        "main",
        "how much did the repair cost?",
        "detail",
    ),
    EventType(
        "restaurant",
        (
            dict(
                place="Casa Lume",
                cuisine="Portuguese",
                order="the octopus rice",
                skip="the dessert",
            ),
            dict(
                place="Little Hanoi",
                cuisine="Vietnamese",
                order="the bun cha",
                skip="the spring rolls",
            ),
            dict(
                place="Ostra",
                cuisine="seafood",
                order="the grilled sardines",
                skip="the oysters, weirdly",
            ),
            dict(
                place="Kebab Royal",
                cuisine="Turkish",
                order="the lahmacun with extra lemon",
                skip="the chips",
            ),
            dict(
                place="Nori & Rye",
                cuisine="Nordic-Japanese",
                order="the smoked eel onigiri",
                skip="the wine list",
            ),
        ),
        (
            T(
                "them",
                "We tried {place} last night, the new {cuisine} spot.",
                "Finally went to {place}. {cuisine}, and so good.",
                facet="main",
            ),
            T("lena", "I've walked past it a hundred times. Worth it?", "What should I order?"),
            T(
                "them",
                "Get {order}, skip {skip}.",
                "Order {order}. Don't bother with {skip}.",
                facet="detail",
            ),
        ),
        (
            A(
                "paraphrase",
                "Which restaurant did {ref} recommend?",
                "Which place to eat did {ref} like?",
                "What's the new {cuisine} place {ref} tried?",
            ),
            A(
                "said",
                "What did {ref} say I should order at {place}?",
                "What should I skip at {place}, according to {ref}?",
                facets=("detail",),
            ),
            A(
                "when",
                "When did {ref} go to {place}?",
                "When did {ref} try the new {cuisine} restaurant?",
            ),
        ),
        "tried {place}",
        "main",
        "what should I order at the restaurant they tried?",
        "detail",
    ),
    EventType(
        "project",
        (
            dict(project="the new booking app", boss="Annelies", deadline="the end of the quarter"),
            dict(
                project="a museum exhibition on canals",
                boss="Dr. Kaya",
                deadline="the opening in November",
            ),
            dict(
                project="the warehouse migration",
                boss="Stefan",
                deadline="before the Christmas rush",
            ),
            dict(
                project="a podcast for the library",
                boss="Mrs. Okafor",
                deadline="the first of the month",
            ),
            dict(project="the school garden", boss="the head teacher", deadline="the spring fair"),
        ),
        (
            T(
                "them",
                "Work is chaos. I'm leading {project} now.",
                "They put me in charge of {project}. Help.",
                facet="main",
            ),
            T("lena", "That's a big deal! Who's your boss on it?", "Oof. When is it due?"),
            T(
                "them",
                "{boss} runs it, and wants it done by {deadline}.",
                "Reporting to {boss}. Deadline is {deadline}.",
                facet="detail",
            ),
        ),
        (
            A(
                "paraphrase",
                "Which project is {ref} leading at work?",
                "What is {ref} in charge of at work?",
            ),
            A(
                "said",
                "Who is {ref}'s boss on {project}?",
                "What's the deadline for {ref}'s project?",
                facets=("detail",),
            ),
            A(
                "when",
                "When did {ref} start leading {project}?",
                "When did {ref} take over the project at work?",
            ),
        ),
        "leads {project}",
        "main",
        "who is their boss on the project at work?",
        "detail",
    ),
    EventType(
        "volunteer",
        (
            dict(place="the food bank", day="Saturday", task="sorting tins by expiry date"),
            dict(place="the animal shelter", day="Sunday", task="walking the dogs nobody adopts"),
            dict(place="a refugee language café", day="Wednesday", task="helping with homework"),
            dict(
                place="the repair café", day="first-Saturday-of-the-month", task="fixing toasters"
            ),
            dict(place="the hospice", day="Thursday", task="reading to patients"),
        ),
        (
            T(
                "them",
                "Started volunteering at {place}, {day} mornings.",
                "I've been helping out at {place} every {day}.",
                facet="main",
            ),
            T("lena", "That's lovely. What do you do there?", "How is it?"),
            T("them", "Mostly {task}. Weirdly satisfying.", "Mainly {task}.", facet="detail"),
        ),
        (
            A(
                "paraphrase",
                "Where does {ref} volunteer?",
                "Where does {ref} help out for free?",
                "What charity work does {ref} do?",
            ),
            A(
                "said",
                "What does {ref} do at {place}?",
                "What does {ref} do when volunteering?",
                facets=("detail",),
            ),
            A(
                "when",
                "When did {ref} start volunteering?",
                "When did {ref} start helping at {place}?",
            ),
        ),
        "volunteers at {place}",
        "main",
        "what do they do when they volunteer?",
        "detail",
    ),
    EventType(
        "film",
        (
            dict(
                film="a Finnish film about a sauna competition",
                where="the little cinema on the canal",
                verdict="the ending made no sense",
            ),
            dict(film="the new Miyazaki", where="the IMAX", verdict="I cried twice"),
            dict(
                film="a documentary about octopuses",
                where="home, under a blanket",
                verdict="I'm never eating calamari again",
            ),
            dict(
                film="a three-hour Polish drama",
                where="the film festival",
                verdict="half the room fell asleep",
            ),
            dict(
                film="a horror film set in a ski resort",
                where="the drive-in",
                verdict="the snow monster looked like a mop",
            ),
        ),
        (
            T(
                "them",
                "Watched {film} at {where}.",
                "Saw {film} last night, at {where}.",
                facet="main",
            ),
            T("lena", "And?", "Worth it?"),
            T("them", "Verdict: {verdict}.", "Honestly, {verdict}.", facet="detail"),
        ),
        (
            A(
                "paraphrase",
                "What film did {ref} watch at {where}?",
                "What movie did {ref} see recently?",
            ),
            A(
                "said",
                "What did {ref} think of {film}?",
                "What was {ref}'s review of the film?",
                facets=("detail",),
            ),
            A(
                "when",
                "When did {ref} watch {film}?",
                "When did {ref} go to see the film at {where}?",
            ),
        ),
        "watched {film}",
        "main",
        "what did they think of the film they watched?",
        "detail",
    ),
    EventType(
        "garden",
        (
            dict(plant="tomatoes", problem="slugs ate half the seedlings", fix="beer traps"),
            dict(
                plant="sunflowers",
                problem="the pigeons pulled them up",
                fix="a net from the hardware store",
            ),
            dict(
                plant="strawberries",
                problem="a blackbird gets there first",
                fix="an old CD on a string",
            ),
            dict(
                plant="courgettes",
                problem="they grew to the size of a baseball bat",
                fix="giving them to everyone",
            ),
            dict(plant="onions", problem="the cat digs in the bed", fix="chicken wire"),
        ),
        (
            T(
                "them",
                "The {plant} on the allotment are finally coming up.",
                "Allotment update: {plant} are growing!",
                facet="main",
            ),
            T("lena", "Green fingers! Any trouble?", "Send me some when they're ready."),
            T(
                "them",
                "Except {problem}. Trying {fix}.",
                "Well, {problem}. Solution: {fix}.",
                facet="detail",
            ),
        ),
        (
            A(
                "paraphrase",
                "What is {ref} growing on the allotment?",
                "What is {ref} growing in the vegetable plot?",
                "What's coming up in {ref}'s garden?",
            ),
            A(
                "said",
                "What trouble did {ref} have with the {plant}?",
                "What pest problem did {ref} have in the garden, and what fixed it?",
                facets=("detail",),
            ),
        ),
        "grows {plant}",
        "main",
        "what trouble did they have in the garden?",
        "detail",
    ),
    EventType(
        "family",
        (
            dict(news="our cousin Mila is pregnant", due="December", detail="it's twins"),
            dict(
                news="Uncle Kasper is retiring",
                due="the summer",
                detail="he wants to sail to Norway",
            ),
            dict(
                news="my old teacher is getting married",
                due="August",
                detail="the groom is the school's headmaster",
            ),
            dict(
                news="the neighbours are selling their house",
                due="spring",
                detail="they're moving to Portugal",
            ),
            dict(news="our dad bought a boat", due="May", detail="he named it after Mum"),
        ),
        (
            T("them", "Did you hear? {news}!", "Family gossip: {news}.", facet="main"),
            T("lena", "No way. Since when?", "When?!"),
            T(
                "them",
                "It's all happening in {due}. And {detail}.",
                "Planned for {due}. Oh, and {detail}.",
                facet="detail",
            ),
        ),
        (
            A("paraphrase", "What family news did {ref} share?", "What gossip did {ref} pass on?"),
            A(
                "said",
                "What else did {ref} tell me about the family news?",
                "When is the family thing {ref} told me about happening?",
                facets=("detail",),
            ),
        ),
        "told me that {news}",
        "main",
        "what else did they say about the family news?",
        "detail",
    ),
)

SMALL_TALK_THEM = (
    "Hey you, how's the week going?",
    "Morning! Survived Monday?",
    "Sorry, was in a meeting all afternoon.",
    "Ha, classic.",
    "Did you see the rain today? Biblical.",
    "I need a holiday from my holiday.",
    "Okay I have to run, the pasta is boiling over.",
    "Call you on Sunday?",
    "My phone is on 3%, talk later!",
    "It's so hot on the tram today, I'm melting.",
    "Any plans for the weekend?",
    "I slept eleven hours and I'm still tired.",
    "Are you coming to the thing on Friday?",
    "Haha no, not that one.",
    "Anyway, enough about me. How are you?",
    "Lol, yes exactly.",
    "I made too much soup again, want some?",
    "The cat next door is sitting on my windowsill judging me.",
    "Can't believe it's already {month}.",
    "Mum called, she says hi.",
    "Good night! Don't stay up too late.",
    "What are you reading at the moment?",
    "I've been meaning to ask, how's work?",
    "The coffee machine at work is broken again, send help.",
    "I think I'm coming down with something.",
)
SMALL_TALK_LENA = (
    "Hi! Long week already.",
    "Haha, same here.",
    "Oh no. Hope it gets better.",
    "Yes! Saturday works.",
    "Sorry, just saw this.",
    "Talk soon x",
    "I'm good, just tired. Work is a lot.",
    "That's hilarious.",
    "Miss you, let's do dinner soon.",
    "Not much, trying to finish a report.",
    "Ugh, I know the feeling.",
    "Sounds perfect.",
    "Tell me everything later.",
    "I'm on the train, will call you back.",
    "Good luck!!",
)

NOTES = (
    # (person, text, pinned). What Lena wrote down herself.
    ("Marek", "Marek is my younger brother. He lives in Leipzig with his girlfriend Dana.", True),
    ("Ines", "Ines is my older sister; she has a five-year-old daughter, Noor.", True),
    ("Samira", "Samira and I have been best friends since primary school in Utrecht.", True),
    ("Joost", "Joost sits next to me at work and runs the data team's Friday demos.", True),
    (
        "Felix",
        "Felix is my partner. He cannot eat peanuts: a severe allergy, he carries an EpiPen.",
        True,
    ),
    ("Rut", "Oma Rut is my grandmother on Mum's side. Her birthday is the 9th of February.", True),
    ("Teodor", "Teodor lives in the flat below ours and waters our plants when we travel.", True),
    ("Priya", "Priya is my climbing partner; we go to the bouldering hall on Tuesdays.", True),
    ("Felix", "Felix hates surprises, so no surprise parties, ever.", True),
    ("Rut", "Oma Rut is hard of hearing on her left side: sit on her right.", True),
    ("Samira", "Samira is vegetarian but eats fish at her parents' house.", False),
    ("Joost", "Joost prefers a phone call to a long message.", False),
    ("Marek", "Marek's girlfriend Dana works as a midwife.", False),
    ("Ines", "Noor is scared of balloons since the party in March.", False),
    ("Teodor", "Teodor plays the cello badly on Sunday mornings.", False),
    ("Priya", "Priya's shoe size is 38, for when I pick up rental shoes.", False),
    ("Rut", "Oma Rut takes her coffee black with two sugars.", False),
    ("Felix", "Felix's mother is called Brigitte; she sends cards for every holiday.", False),
    ("Samira", "Samira's wedding anniversary is the 14th of June.", False),
    ("Joost", "Joost is colour-blind, red and green look alike to him.", False),
    ("Marek", "Marek still owes me 60 euros from the festival.", False),
    ("Ines", "Ines likes lilies, never roses.", False),
    ("Teodor", "Teodor's spare key to our flat is in the blue tin in his hallway.", False),
    ("Priya", "Priya is afraid of heights on ladders but fine on climbing walls.", False),
)
NOTE_ASKS = (
    ("Samira", "Does Samira eat meat?", "paraphrase"),
    ("Joost", "What's the best way to reach Joost?", "paraphrase"),
    ("Marek", "What does Marek's girlfriend do for a living?", "paraphrase"),
    ("Ines", "What is my niece afraid of?", "paraphrase"),
    ("Teodor", "Which instrument does the man downstairs play?", "paraphrase"),
    ("Priya", "What size shoes does Priya wear?", "paraphrase"),
    ("Rut", "How does my grandmother like her coffee?", "paraphrase"),
    ("Felix", "What's the name of Felix's mum?", "paraphrase"),
    ("Samira", "When is Samira's anniversary?", "when"),
    ("Joost", "Is there any colour Joost can't tell apart?", "paraphrase"),
    ("Marek", "How much money does my brother owe me?", "paraphrase"),
    ("Ines", "Which flowers should I bring my sister?", "paraphrase"),
    ("Teodor", "Where can I find the spare key to our flat?", "paraphrase"),
    ("Priya", "Is Priya scared of anything?", "paraphrase"),
)
PINNED_ASKS = (
    (4, "Can I bake a peanut butter cake for my partner?"),
    (4, "Is there anything Felix must not eat?"),
    (5, "When is Oma's birthday?"),
    (0, "Where does Marek live?"),
    (1, "How old is my niece?"),
    (2, "How long have Samira and I known each other?"),
    (3, "Who runs the Friday demos at work?"),
    (6, "Who looks after our plants when we go away?"),
    (7, "Which day do Priya and I usually climb?"),
    (8, "Should I throw Felix a surprise party for his birthday?"),
    (9, "Where should I sit at dinner with my grandmother?"),
)
# (person, what was said first, its correction, the outdated strings, a question)
CORRECTIONS = (
    (
        "Joost",
        "Joost: The team offsite is in Utrecht on the 14th, bring walking shoes.",
        "Joost's team offsite moved to Haarlem; the 14th still stands.",
        ["offsite is in Utrecht"],
        "Where is Joost's team offsite?",
    ),
    (
        "Samira",
        "Samira: My new number is 06 4471 2209, delete the old one.",
        "Samira's number is 06 4471 2290; the last two digits were swapped in her message.",
        ["06 4471 2209"],
        "What is Samira's phone number?",
    ),
    (
        "Marek",
        "Marek: Dana and I are flying in on the 23rd of December.",
        "Marek and Dana now arrive on the 21st of December, not the 23rd.",
        ["flying in on the 23rd of December"],
        "When are my brother and his girlfriend arriving for Christmas?",
    ),
    (
        "Rut",
        "Rut: My doctor's appointment is on Wednesday at ten, can you drive me?",
        "Oma Rut's doctor moved the appointment to Thursday at half past two.",
        ["appointment is on Wednesday at ten"],
        "When do I need to drive Oma to the doctor?",
    ),
    (
        "Ines",
        "Ines: Noor's school play is in the church hall.",
        "Noor's school play is in the gym of the school, not the church hall, because of "
        "the renovation.",
        ["church hall"],
        "Where is my niece's school play taking place?",
    ),
    (
        "Felix",
        "Felix: My team dinner is at Ostra on Friday, so I'll be late.",
        "Felix's team dinner moved from Ostra to Casa Lume.",
        ["dinner is at Ostra"],
        "Which restaurant is Felix's work dinner at?",
    ),
    (
        "Teodor",
        "Teodor: The building's water will be off on Monday morning.",
        "The water in the building is off on Tuesday morning, not Monday: the plumber's "
        "notice changed.",
        ["water will be off on Monday"],
        "Which day is the water switched off in our building?",
    ),
    (
        "Priya",
        "Priya: The bouldering competition is at Klimhal Noord.",
        "Priya says the bouldering competition is at the new hall in Zuid, not Klimhal Noord.",
        ["Klimhal Noord"],
        "Where is the climbing competition Priya mentioned?",
    ),
    (
        "Joost",
        "Joost: The quarterly report is due on the 3rd.",
        "The quarterly report is due on the 7th now; Joost got an extension.",
        ["report is due on the 3rd"],
        "When is the quarterly report due?",
    ),
    (
        "Samira",
        "Samira: The hen party is at my cousin's place in Delft.",
        "The hen party moved to a boat on the canal in Leiden.",
        ["cousin's place in Delft"],
        "Where is the hen party happening?",
    ),
    (
        "Marek",
        "Marek: Dana's surname is Kowalsky, with a y.",
        "Dana's surname is Kowalski, with an i; Marek misspelled it.",
        ["Kowalsky"],
        "How do you spell Dana's last name?",
    ),
    (
        "Rut",
        "Rut: I'll make the Christmas goose this year.",
        "Oma Rut is making duck this Christmas, not goose, the butcher ran out.",
        ["Christmas goose"],
        "What is Oma cooking for Christmas?",
    ),
)

TWO_HOP = (
    "The person who {who}: {what}",
    "You know who {who}? {what_cap}",
    "Remind me, whoever {who}, {what}",
    "Someone {who} this year. {what_cap}",
)


@dataclass
class Memory:
    id: str
    title: str
    body: str
    created: str
    kind: str = "event"
    tags: list[str] = field(default_factory=list)
    pinned: bool = False
    deprecates: list[str] = field(default_factory=list)
    source: str = ""


def _id(rng: random.Random, taken: set[str]) -> str:
    while True:
        mid = "".join(rng.choice(ID_ALPHABET) for _ in range(10))
        if mid not in taken and not mid.isdigit():
            taken.add(mid)
            return mid


def _title(body: str) -> str:
    """As `memoryctl add` titles a memory: its first line, cut at 72 characters."""
    first = body.splitlines()[0].strip(" #")
    return first if len(first) <= 72 else first[:72].rsplit(" ", 1)[0] + "…"


def _stamp(moment: dt.datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fill(text: str, slots: dict[str, str]) -> str:
    return _cap(text.format(**slots)) if text[:1] == "{" else text.format(**slots)


def _ref(person: Person, rng: random.Random) -> str:
    return person.relation if rng.random() < 0.3 else person.name


def _known(slots: dict[str, str]) -> dict[str, str]:
    """What Lena remembers of an event, to name it in a question: each slot as said, and
    as a bare noun ("the boiler" is also "boiler", "a road bike" also "road bike")."""
    bare = {f"{k}_n": re.sub(r"^(a|an|the) ", "", v) for k, v in slots.items()}
    return {**slots, **bare}


def _they(text: str, person: Person) -> str:
    """A two-hop question's second half, about the person it names: "they" becomes "she"."""
    swaps = {"they": person.sub, "their": person.pos, "them": person.obj}
    text = re.sub(r"\b(they|their|them)\b", lambda m: swaps[m.group(1)], text)
    for wrong, right in (("are", "is"), ("have", "has"), ("do", "does")):
        text = re.sub(rf"\b{wrong} (s?he)\b", rf"{right} \1", text)
    return text


@dataclass
class _Chat:
    """One chat between Lena and a person: each turn is a memory, a few minutes apart."""

    person: Person
    moment: dt.datetime
    rng: random.Random
    taken: set[str]
    memories: list[Memory]

    def say(self, speaker: str, text: str) -> str:
        self.moment += dt.timedelta(minutes=self.rng.randint(1, 6))
        who = OWNER if speaker == "lena" else self.person.name
        body = f"{who}: " + re.sub(r"([.!?] )([a-z])", lambda m: m[1] + m[2].upper(), text)
        mid = _id(self.rng, self.taken)
        self.memories.append(
            Memory(
                mid,
                _title(body),
                body,
                _stamp(self.moment),
                tags=["chat", self.person.name.lower()],
                source=f"user:chat with {self.person.name}, {self.moment:%Y-%m-%d}",
            )
        )
        return mid


def build() -> dict[str, object]:
    rng = random.Random(SEED)
    taken: set[str] = set()
    memories: list[Memory] = []
    questions: list[dict[str, object]] = []
    # Every event instance goes to a person; nobody lives the same kind of event twice.
    plan: list[tuple[EventType, dict[str, str], Person]] = []
    for event in EVENTS:
        people = rng.sample(PEOPLE, len(event.instances))
        plan += [
            (event, slots, person) for slots, person in zip(event.instances, people, strict=True)
        ]
    rng.shuffle(plan)

    # Sessions: one chat with one person, every few days from January to November.
    start = dt.datetime(2025, 1, 4, 18, 0)
    by_person: dict[str, list[tuple[EventType, dict[str, str], Person]]] = {}
    for item in plan:
        by_person.setdefault(item[2].name, []).append(item)
    sessions: list[tuple[Person, list[tuple[EventType, dict[str, str], Person]]]] = []
    for person in PEOPLE:
        items = by_person.get(person.name, [])
        for at in range(0, len(items), 2):
            sessions.append((person, items[at : at + 2]))
    rng.shuffle(sessions)
    # Pad with chats of small talk alone, so that most chats are not about any event.
    for _ in range(len(sessions) // 3):
        sessions.insert(rng.randrange(len(sessions)), (rng.choice(PEOPLE), []))

    said: dict[tuple[str, str], dict[str, list[str]]] = {}  # (event key, person) -> facet -> ids
    corrections_due = list(CORRECTIONS)
    span = (dt.datetime(2025, 11, 28) - start).days
    for number, (person, items) in enumerate(sessions):
        moment = start + dt.timedelta(days=span * number // len(sessions), hours=rng.randint(0, 4))
        month = moment.strftime("%B")
        chat = _Chat(person, moment, rng, taken, memories)
        say = chat.say

        opening = [("them", rng.choice(SMALL_TALK_THEM)), ("lena", rng.choice(SMALL_TALK_LENA))]
        for speaker, text in opening:
            say(speaker, text.format(month=month))
        for event, slots, _ in items:
            facets: dict[str, list[str]] = {}
            filled = dict(slots, kind=slots.get("kind", ""))
            for turn in event.turns:
                mid = say(turn.speaker, _fill(rng.choice(turn.texts), filled))
                if turn.facet:
                    facets.setdefault(turn.facet, []).append(mid)
            said[(event.key, person.name)] = facets
            for _ in range(rng.randint(1, 3)):
                pool = SMALL_TALK_THEM if rng.random() < 0.5 else SMALL_TALK_LENA
                say(
                    "them" if pool is SMALL_TALK_THEM else "lena",
                    rng.choice(pool).format(month=month),
                )
        # Once in a while, a chat carries something that is later corrected.
        due = [c for c in corrections_due if c[0] == person.name]
        if due and rng.random() < 0.5:
            first = due[0]
            corrections_due.remove(first)
            original = first[1].split(": ", 1)[1]
            old = say("them", original)
            fix_at = chat.moment + dt.timedelta(days=rng.randint(2, 9))
            fix = Memory(
                _id(rng, taken),
                _title(first[2]),
                first[2],
                _stamp(fix_at),
                kind="correction",
                tags=[person.name.lower()],
                deprecates=list(first[3]),
                source="user",
            )
            memories.append(fix)
            questions.append(
                dict(question=first[4], kind="corrected", answers=[fix.id], about=[old])
            )
        for _ in range(rng.randint(1, 3)):
            say("lena", rng.choice(SMALL_TALK_LENA))
            say("them", rng.choice(SMALL_TALK_THEM).format(month=month))

    # Corrections whose person had no spare chat: said in a chat of their own.
    for person_name, first, fix_text, needles, question in corrections_due:
        person = next(p for p in PEOPLE if p.name == person_name)
        moment = start + dt.timedelta(days=rng.randint(20, span - 20))
        old = Memory(
            _id(rng, taken),
            _title(first),
            first,
            _stamp(moment),
            tags=["chat", person_name.lower()],
            source=f"user:chat with {person_name}, {moment:%Y-%m-%d}",
        )
        fix = Memory(
            _id(rng, taken),
            _title(fix_text),
            fix_text,
            _stamp(moment + dt.timedelta(days=4)),
            kind="correction",
            tags=[person_name.lower()],
            deprecates=list(needles),
            source="user",
        )
        memories += [old, fix]
        questions.append(
            dict(question=question, kind="corrected", answers=[fix.id], about=[old.id])
        )

    notes: list[Memory] = []
    for number, (person_name, text, pinned) in enumerate(NOTES):
        moment = start + dt.timedelta(days=3 + number * 9, hours=21)
        notes.append(
            Memory(
                _id(rng, taken),
                _title(text),
                text,
                _stamp(moment),
                kind="fact",
                tags=[person_name.lower()],
                pinned=pinned,
                source="user",
            )
        )
    memories += notes
    for index, question in PINNED_ASKS:
        questions.append(dict(question=question, kind="pinned", answers=[notes[index].id]))
    for person_name, question, kind in NOTE_ASKS:
        match = [
            n
            for (p, _, pinned), n in zip(NOTES, notes, strict=True)
            if p == person_name and not pinned
        ]
        answer = next(n for n in match if _note_answers(n.body, question))
        questions.append(dict(question=question, kind=kind, answers=[answer.id]))

    # Questions about the chats, in Lena's words.
    people = {p.name: p for p in PEOPLE}
    slots_of = {(e.key, p.name): s for e, s, p in plan}
    for (key, name), facets in said.items():
        event = next(e for e in EVENTS if e.key == key)
        person = people[name]
        for ask in event.asks:
            answers = [mid for facet in ask.facets for mid in facets.get(facet, [])]
            if not answers:
                continue
            text = rng.choice(ask.texts).format(
                ref=_ref(person, rng), **_known(slots_of[key, name])
            )
            questions.append(dict(question=_cap(text), kind=ask.kind, answers=answers))

    # Two-hop: who did one thing, then something else about them.
    pairs = [(a, b) for a in said for b in said if a[1] == b[1] and a[0] != b[0]]
    rng.shuffle(pairs)
    for (key_a, name), (key_b, _) in pairs[:60]:
        first = next(e for e in EVENTS if e.key == key_a)
        second = next(e for e in EVENTS if e.key == key_b)
        who = first.who.format(**slots_of[(key_a, name)])
        what = _they(second.what.format(**_known(slots_of[(key_b, name)])), people[name])
        text = rng.choice(TWO_HOP).format(who=who, what=what, what_cap=_cap(what))
        answers = said[(key_a, name)].get(first.who_facet, []) + said[(key_b, name)].get(
            second.what_facet, []
        )
        questions.append(dict(question=_cap(text), kind="two-hop", answers=answers))

    memories.sort(key=lambda m: (m.created, m.id))
    return {
        "about": (
            "Lena's chats with eight people and her notes about them, 2025; questions she "
            "might ask her agent, each naming the memories that answer it. Written for "
            "memoryctl's recall benchmark (bench/data/make_conversations.py), and part of "
            "memoryctl under the same terms as the rest of the project."
        ),
        "memories": [m.__dict__ for m in memories],
        "questions": [dict(q, id=f"q{n:03d}") for n, q in enumerate(questions, 1)],
    }


def _note_answers(body: str, question: str) -> bool:
    """Which of a person's notes a hand-written question is about, by one word they share."""
    keys = {
        "meat": "vegetarian",
        "reach": "phone",
        "living": "midwife",
        "afraid": "balloons",
        "instrument": "cello",
        "shoes": "shoe",
        "coffee": "coffee",
        "mum": "mother",
        "anniversary": "anniversary",
        "colour": "colour",
        "money": "euros",
        "flowers": "lilies",
        "key": "key",
        "scared": "heights",
    }
    return any(
        word in question.casefold() and mark in body.casefold() for word, mark in keys.items()
    )


def _one_per_line(data: dict[str, object]) -> str:
    """JSON with one memory or question a line, so a change to the data reads as a diff."""
    parts = [f' "about": {json.dumps(data["about"])}']
    for key in ("memories", "questions"):
        rows = ",\n".join("  " + json.dumps(row, ensure_ascii=False) for row in data[key])  # type: ignore[union-attr]
        parts.append(f' "{key}": [\n{rows}\n ]')
    return "{\n" + ",\n".join(parts) + "\n}\n"


def main() -> None:
    data = build()
    OUT.write_text(_one_per_line(data), encoding="utf-8")
    kinds: dict[str, int] = {}
    for q in data["questions"]:  # type: ignore[union-attr]
        kinds[q["kind"]] = kinds.get(q["kind"], 0) + 1
    print(f"{len(data['memories'])} memories, {len(data['questions'])} questions: {kinds}")


if __name__ == "__main__":
    main()
