"""Clustered test data: 20 topics, each a family of paraphrased facts built from templates, and questions about them.

Random vectors make every ANN index look broken and every exact search look fine; real memories cluster by topic,
with many near-duplicates. These do too, deterministically (seeded).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

import psycopg
from pgvector.psycopg import register_vector

from memchat.embedders import get_embedder
from memchat.facts import parse_fact

# topic: (fact templates with {v}, values, questions)
TOPICS: dict[str, tuple[list[str], list[str], list[str]]] = {
    "colour": (["My favourite colour is {v}.", "Remember that my favourite colour is {v}",
                "The colour I like best is {v}", "I would always pick {v} as my favourite colour",
                "favourite colour: {v}"],
               ["teal", "crimson", "amber", "indigo", "olive", "coral", "mauve", "ochre"],
               ["What is my favourite colour?", "which colour do I like best", "favourite colour"]),
    "pet": (["My dog is called {v}.", "Our dog's name is {v}", "The name of my dog is {v}", "I walk my dog {v} daily"],
            ["Biscuit", "Rex", "Luna", "Pepper", "Maple", "Otis", "Juniper"],
            ["What is my dog called?", "name of my dog", "who is my dog"]),
    "city": (["My home town is {v}.", "I grew up in the town of {v}", "home town: {v}", "I was born in {v} town"],
             ["Lisbon", "Tromso", "Ghent", "Porto", "Bergen", "Leeds", "Turku"],
             ["Where is my home town?", "which town did I grow up in", "home town"]),
    "order": (["My order number is {v}.", "The number of my last order is {v}", "order number {v} is mine",
               "Please keep my order number {v}"],
              ["A-1042", "B-7781", "C-3310", "Z-9001", "K-5521", "Q-0007"],
              ["What is my order number?", "order number", "my last order number"]),
    "dentist": (["My dentist appointment is on {v}.", "The dentist expects me on {v}", "dentist appointment {v}",
                 "I booked the dentist for {v}"],
                ["Monday", "Tuesday morning", "the 3rd of May", "Friday at noon", "next Thursday"],
                ["When is my dentist appointment?", "dentist appointment", "when do I see the dentist"]),
    "wifi": (["My wifi password is {v}.", "The home wifi password is {v}", "wifi password: {v}",
              "Our router's wifi password is {v}"],
             ["sunflower42", "blue-otter-9", "hunter2", "correcthorse", "kettle77"],
             ["What is my wifi password?", "wifi password", "home router password"]),
    "sister": (["My sister's birthday is {v}.", "My sister was born on {v}", "sister birthday {v}",
                "We celebrate my sister's birthday on {v}"],
               ["March 3", "July 19", "October 30", "January 2", "August 8"],
               ["When is my sister's birthday?", "sister birthday", "when was my sister born"]),
    "car": (["My car is a {v}.", "I drive a {v} car", "The car I own is a {v}", "car model: {v}"],
            ["Volvo V60", "Skoda Octavia", "Toyota Yaris", "Tesla Model 3", "Fiat Panda"],
            ["What car do I drive?", "my car model", "which car is mine"]),
    "employer": (["My employer is {v}.", "I work at {v} as an engineer", "I have been employed by {v} since 2019",
                  "employer: {v}"],
                 ["Acme Corp", "Globex", "Initech", "Umbrella Labs", "Stark Industries"],
                 ["Who is my employer?", "where do I work", "my employer"]),
    "allergy": (["My allergy is {v}.", "I am allergic to {v}", "allergy: {v}, keep it away from me",
                 "Doctors confirmed my {v} allergy"],
                ["peanuts", "penicillin", "shellfish", "pollen", "cat hair", "latex"],
                ["What am I allergic to?", "my allergy", "which allergy do I have"]),
    "book": (["My favourite book is {v}.", "The book I love most is {v}", "favourite book: {v}",
              "I keep rereading {v}, my favourite book"],
             ["Dune", "Middlemarch", "Solaris", "Emma", "Beloved", "Ulysses"],
             ["What is my favourite book?", "favourite book", "which book do I love most"]),
    "gym": (["My gym sessions are on {v}.", "I train at the gym every {v}", "gym schedule: {v}",
             "The gym sees me on {v}"],
            ["Mondays and Thursdays", "weekday mornings", "Saturdays", "Tuesday evenings"],
            ["When are my gym sessions?", "gym schedule", "which days do I train at the gym"]),
    "coffee": (["My coffee order is {v}.", "I always order a {v} coffee", "coffee order: {v}",
                "Get me a {v} when you buy coffee"],
               ["flat white", "double espresso", "oat latte", "cortado", "black americano"],
               ["What is my coffee order?", "coffee order", "how do I take my coffee"]),
    "phone": (["My phone is a {v}.", "I carry a {v} phone", "phone model: {v}", "The phone I use is a {v}"],
              ["Pixel 8", "iPhone 15", "Fairphone 5", "Galaxy S23", "Nokia 3310"],
              ["What phone do I have?", "my phone model", "which phone do I use"]),
    "flight": (["My flight number is {v}.", "I fly on flight {v} tomorrow", "flight number: {v}",
                "Booked flight {v} for the conference"],
               ["LH 454", "BA 117", "KL 1023", "SK 901", "AY 666"],
               ["What is my flight number?", "flight number", "which flight am I on"]),
    "blood": (["My blood type is {v}.", "blood type: {v}", "The lab says my blood type is {v}",
               "I have {v} blood type"],
              ["A positive", "O negative", "B positive", "AB negative"],
              ["What is my blood type?", "blood type", "which blood type do I have"]),
    "landlord": (["My landlord is {v}.", "The flat belongs to my landlord {v}", "landlord: {v}",
                  "Rent goes to my landlord {v}"],
                 ["Mr Okafor", "Mrs Lindqvist", "Dr Petrov", "Ms Alvarez", "Mr Tanaka"],
                 ["Who is my landlord?", "landlord", "who do I pay rent to"]),
    "lock": (["My bike lock code is {v}.", "The code of my bike lock is {v}", "bike lock: {v}",
              "I set the bike lock combination to {v}"],
             ["4471", "0912", "3306", "7788", "1234"],
             ["What is my bike lock code?", "bike lock code", "combination of my bike lock"]),
    "piano": (["My piano teacher is {v}.", "I take piano lessons with {v}", "piano teacher: {v}",
               "{v} teaches me piano on weekends"],
              ["Clara", "Frederic", "Martha", "Sergei", "Yuja"],
              ["Who is my piano teacher?", "piano teacher", "who teaches me piano"]),
    "shoes": (["My shoe size is {v}.", "I wear shoes in size {v}", "shoe size: {v}", "Buy my shoes in size {v}"],
              ["42", "38", "44.5", "9 UK", "11 US"],
              ["What is my shoe size?", "shoe size", "which size are my shoes"]),
}

FILLERS = ["", "", "", " since last year", " for now", " as of this week", " according to my notes",
           " if anyone asks", " by the way", " this season"]


@dataclass(frozen=True)
class Row:
    id: str
    user_id: str
    text: str
    topic: str


def fact_text(rng: random.Random, topic: str) -> str:
    templates, values, _ = TOPICS[topic]
    return rng.choice(templates).format(v=rng.choice(values)) + rng.choice(FILLERS)


def owner_topics(rng: random.Random, n: int = 4) -> list[str]:
    return rng.sample(sorted(TOPICS), n)


def generate(owners: dict[str, int], seed: int = 7) -> list[Row]:
    """`owners`: user id -> number of rows. Each owner talks mostly about a few topics of their own (clusters within
    clusters), sometimes about any topic. Ids are m_<owner>_<n>, so ties are broken by a predictable id."""
    rng = random.Random(seed)
    rows = []
    for user_id, n in owners.items():
        favourite = owner_topics(rng)
        for i in range(n):
            topic = rng.choice(favourite) if rng.random() < 0.8 else rng.choice(sorted(TOPICS))
            rows.append(Row(f"m_{user_id}_{i:05d}", user_id, fact_text(rng, topic), topic))
    rng.shuffle(rows)  # interleave owners, as real traffic would
    return rows


def questions(rng: random.Random, topics: list[str], per_topic: int = 1) -> list[str]:
    out = []
    for topic in topics:
        out += rng.sample(TOPICS[topic][2], per_topic)
    return out


def load(dsn: str, rows: list[Row], now: datetime, special: bool = True) -> None:
    """Insert the owners (as users) and their rows, embedded with hash-ngram-v1. With `special`, every 37th row is
    expired, every 41st has no embedding and every 43rd was written under hash-ngram-v2: recall must skip them all."""
    v1, v2 = get_embedder("hash-ngram-v1"), get_embedder("hash-ngram-v2")
    owners = sorted({r.user_id for r in rows})
    params = []
    for n, row in enumerate(rows):
        created = now - timedelta(days=200) + timedelta(seconds=n)
        expires = now - timedelta(days=1) if special and n % 37 == 0 else created + timedelta(days=365)
        embedder = v2 if special and n % 43 == 0 else v1
        vec = None if special and n % 41 == 0 else embedder.embed(row.text)
        fact = parse_fact(row.text)
        params.append((row.id, row.user_id, None, row.text, fact.key if fact else None, vec, embedder.name,
                       embedder.dims, created, expires))
    with psycopg.connect(dsn, autocommit=True) as conn:
        register_vector(conn)
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO users (id, email, password_hash) VALUES (%s, %s, 'x') ON CONFLICT DO NOTHING",
                            [(u, f"{u}@example.test") for u in owners])
            cur.executemany(
                "INSERT INTO memories (id, user_id, conversation_id, text, fact_key, embedding, embedder, dims,"
                " created_at, expires_at) VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s)", params)
