"""A project's notes with planted near-duplicates, changed values and unrelated notes (type, older, newer)."""

from __future__ import annotations

DUPLICATES = [
    (
        "preference",
        "The user prefers dark mode in code editors.",
        "The user likes dark mode in their code editor.",
    ),
    ("fact", "Alice is allergic to peanuts.", "Alice has a peanut allergy."),
    ("preference", "The user wants short answers.", "The user prefers short answers."),
    ("fact", "The user's dog is called Pepper.", "The user's dog is named Pepper."),
    (
        "decision",
        "The team chose PostgreSQL for the billing service.",
        "PostgreSQL was chosen for the billing service.",
    ),
    ("fact", "The user works remotely from home.", "The user works from home remotely."),
    ("preference", "The user drinks tea instead of coffee.", "The user prefers tea to coffee."),
    ("fact", "Bob is the user's manager.", "The user's manager is Bob."),
    ("decision", "Deployments happen only on weekdays.", "We only deploy on weekdays."),
    ("insight", "Flaky tests mostly come from shared state.", "Most flaky tests are caused by shared state."),
]
CHANGES = [
    ("fact", "Carol lives in Porto.", "Carol lives in Lisbon."),
    ("fact", "The project deadline is March 3.", "The project deadline is April 10."),
    ("fact", "The user's team has 5 engineers.", "The user's team has 8 engineers."),
    ("decision", "The API is written in Python.", "The API is written in Rust."),
    (
        "fact",
        "The office Wi-Fi password rotates every 30 days.",
        "The office Wi-Fi password rotates every 90 days.",
    ),
]
UNRELATED = [
    ("fact", "Dave lives in Porto."),
    ("fact", "The user's cat is called Miso."),
    ("fact", "The user's sister plays the cello."),
    ("preference", "The user likes hiking on weekends."),
    ("decision", "The mobile app uses Kotlin."),
    ("fact", "The user's birthday is on July 14."),
    ("insight", "Caching the embeddings halved the latency."),
    ("fact", "Erin is the user's dentist."),
    ("preference", "The user avoids meetings before 10am."),
    ("fact", "The staging cluster runs in Frankfurt."),
]
