"""A corpus of FAKE secrets, as users paste them, and of near-misses that must survive redaction.

Every secret body comes from a seeded generator, so no literal credential sits in the
source (and no scanner mistakes this file for a leak) while each one keeps the exact
shape of the real thing. ``SECRETS`` pairs a text with the secret inside it; redaction
must remove the secret. ``NEAR_MISSES`` are texts redaction must leave exactly as they are.
"""

from __future__ import annotations

import base64
import random
import string

_rng = random.Random(20260611)
ALNUM = string.ascii_letters + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
UPPER32 = string.ascii_uppercase + "234567"


def body(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def _luhn_complete(prefix: str, length: int) -> str:
    """A card number with a valid Luhn check digit (issuer test ranges, never a real card)."""
    digits = prefix + "".join(_rng.choice(string.digits) for _ in range(length - len(prefix) - 1))
    for check in string.digits:
        candidate = digits + check
        total = sum(
            (d * 2 - 9 if d * 2 > 9 else d * 2) if i % 2 else d
            for i, d in enumerate(int(c) for c in reversed(candidate))
        )
        if total % 10 == 0:
            return candidate
    raise AssertionError("unreachable: one check digit always fits")


def _jwt() -> str:
    def part(raw: str) -> str:
        return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")

    return ".".join(
        (part('{"alg":"HS256","typ":"JWT"}'), part('{"sub":"1234567890","name":"Ada"}'), body(43, URLSAFE))
    )


def _pem(label: str) -> str:
    lines = "\n".join(body(64, B64) for _ in range(5))
    return f"-----BEGIN {label}PRIVATE KEY-----\n{lines}\n-----END {label}PRIVATE KEY-----"


_azure_key = body(86, B64) + "=="
_twilio = body(32, HEX)
_visa = _luhn_complete("4", 16)
_mastercard = _luhn_complete("51", 16)
_amex = _luhn_complete("37", 15)

SECRETS: list[tuple[str, str, str]] = [
    # (kind, text as a user would write it, the secret that must not survive)
    (s[0], s[1].format(secret=s[2]), s[2])
    for s in [
        ("openai", "My OpenAI key is {secret}, keep it safe.", "sk-proj-" + body(48)),
        ("anthropic", "ANTHROPIC_API_KEY={secret}", "sk-ant-api03-" + body(93, URLSAFE) + "AA"),
        ("stripe", "Charge with {secret} in production.", "sk_" + "live_" + body(24)),
        ("stripe", "the restricted key is {secret}", "rk_" + "test_" + body(24)),
        ("stripe", "webhook signing secret {secret}", "whsec_" + body(32)),
        ("aws", "AWS key id {secret} for the deploy user", "AKIA" + body(16, UPPER32)),
        ("aws", "aws_secret_access_key = {secret}", body(40, B64)),
        ("github", "push with {secret}", "ghp_" + body(36)),
        ("github", "fine-grained token {secret}", "github_pat_" + body(22) + "_" + body(59)),
        ("gitlab", "GitLab PAT: {secret}", "glpat-" + body(20, URLSAFE)),
        ("slack", "bot token {secret}", "xoxb-" + body(12, string.digits) + "-" + body(24)),
        (
            "slack",
            "post alerts to {secret}",
            "https://hooks.slack.com/services/T" + body(8) + "/B" + body(8) + "/" + body(24),
        ),
        ("google", "Maps key {secret}", "AIza" + body(35, URLSAFE)),
        ("google", "OAuth client secret {secret}", "GOCSPX-" + body(28, URLSAFE)),
        ("jwt", "session cookie {secret}", _jwt()),
        ("pem", "deploy key:\n{secret}\nuse it for prod", _pem("RSA ")),
        ("pem", "{secret}", _pem("OPENSSH ")),
        ("bearer", "curl -H 'Authorization: Bearer {secret}' https://api.example.com", body(40, URLSAFE)),
        (
            "basic",
            "Authorization: Basic {secret}",
            base64.b64encode(f"admin:{body(12)}".encode()).decode(),
        ),
        ("url", "DATABASE_URL=postgres://app_user:{secret}@db.internal:5432/prod", body(16)),
        ("url", "connect with mysql://root:{secret}@localhost/shop", "Hunter2Pass" + body(4)),
        ("url", "git remote add origin https://deploy:{secret}@git.example.com/team/repo.git", body(20)),
        ("url", "mongodb+srv://admin:{secret}@cluster0.abcde.mongodb.net/test", body(18)),
        ("url", "cache at redis://:{secret}@cache:6379/0", body(24)),
        (
            "azure",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={secret};EndpointSuffix=core.windows.net",
            _azure_key,
        ),
        (
            "azure",
            "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig={secret}",
            body(30) + "%2B" + body(10) + "%3D",
        ),
        ("npm", "//registry.npmjs.org/:_authToken {secret}", "npm_" + body(36)),
        ("huggingface", "HF token {secret}", "hf_" + body(34)),
        ("sendgrid", "SendGrid: {secret}", "SG." + body(22, URLSAFE) + "." + body(43, URLSAFE)),
        ("twilio", "TWILIO_AUTH_TOKEN={secret}", body(32, HEX)),
        ("twilio", "Twilio auth token: {secret}", _twilio),
        ("twilio", "Twilio API key {secret}", "SK" + body(32, HEX)),
        ("mailchimp", "Mailchimp key {secret}", body(32, HEX) + "-us12"),
        ("card", "Visa {secret} exp 12/29", " ".join(_visa[i : i + 4] for i in range(0, 16, 4))),
        ("card", "card: {secret}", "-".join(_mastercard[i : i + 4] for i in range(0, 16, 4))),
        ("card", "amex {secret}", _amex),
        (
            "discord",
            "Discord bot token {secret}",
            "M" + body(25) + "." + body(6, URLSAFE) + "." + body(38, URLSAFE),
        ),
        (
            "discord",
            "webhook {secret}",
            "https://discord.com/api/webhooks/" + body(18, string.digits) + "/" + body(68, URLSAFE),
        ),
        ("telegram", "bot token {secret}", body(10, string.digits) + ":AA" + body(33, URLSAFE)),
        ("pypi", "upload with {secret}", "pypi-AgEIcHlwaS5vcmc" + body(60, URLSAFE)),
        ("shopify", "Shopify admin token {secret}", "shpat_" + body(32, HEX)),
        ("digitalocean", "DO token {secret}", "dop_v1_" + body(64, HEX)),
        ("vault", "VAULT_TOKEN={secret}", "hvs." + body(24)),
        ("groq", "groq key {secret}", "gsk_" + body(52)),
        ("env", "DB_PASSWORD={secret}", "Tr0ub4dor&3x"),
        ("env", "export PAYMENTS_SECRET={secret}", body(24)),
        ("json", '{{"api_key": "{secret}", "region": "eu"}}', body(32)),
        ("yaml", "auth:\n  client_secret: {secret}\n  scope: read", body(30, URLSAFE)),
        ("prose", "the wifi password: {secret}", "Tr0ub4dor&3"),
        ("header", "x-api-key: {secret}", body(40)),
        ("heroku", "HEROKU_API_KEY={secret}", "a3f1c2d4-5b6e-4f70-8a9b-0c1d2e3f4a5b"),
        ("python", 'client = Client(token="{secret}")', body(28)),
    ]
]

NEAR_MISSES: list[str] = [
    "Fixed in commit 3f786850e387550fdab836ed7e6dc881de23001b, see a1b2c3d.",
    "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "md5 = d41d8cd98f00b204e9800998ecf8427e",
    "nginx@sha256:0d17b565c37bcbd895e9d92315a05c1c3c9a29f762b011a10c54a66cd53c9b31",
    '"etag": "33a64df551425fcc55e4d42a148795d9f25f89d4"',
    "request id 550e8400-e29b-41d4-a716-446655440000 failed",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl ada@laptop",
    "token = tokenizer.encode(text)",
    "password = getpass.getpass()",
    "api_key = os.environ['OPENAI_API_KEY']",
    "secret = settings.secret_key",
    "def rotate_secret(secret_name: str, new_password: str) -> None:",
    "if token == expected_token: return True",
    "Upgraded numpy from 1.26.4 to 2.0.0rc1 and torch==2.3.1+cu121.",
    "pip install transformers==4.41.2",
    "ISBN 978-0-306-40615-7 and ISBN-10 0-306-40615-2",
    "Call me at +1 (415) 555-0132 or +44 20 7946 0958.",
    "IBAN DE89 3704 0044 0532 0130 00",
    "order 4111 1111 1111 1112 (not a valid card)",
    "epoch millis 1700000000123",
    "Pneumonoultramicroscopicsilicovolcanoconiosis beats antidisestablishmentarianism.",
    "AbstractSingletonProxyFactoryBean implements BeanFactoryAware",
    "https://docs.python.org/3/library/secrets.html#module-secrets",
    "http://localhost:8080/api/v1/tokens?page=2",
    "mailto:support@example.com",
    "The password: it must be at least twelve characters long.",
    "Remember to rotate your password every 90 days.",
    "I forgot my password again, reset it please.",
    "The secret: the meeting moved to Friday.",
    "Set max_tokens=1500 and chunk tokens: 256.",
    "The token_count is 4096 for this model.",
    "OPENAI_API_KEY=<your-key-here>",
    "password: ${DB_PASSWORD}",
    'api_key = "YOUR_API_KEY"',
    "primary key: user_id",
    "fe80::1ff:fe23:4567:890a and 2024-03-15T10:30:00Z",
    "Tracking number 1Z999AA10123456784",
    "Use scikit-learn (sklearn), not sk-learn.",
    "color #ff5733 on #1e1e1e",
    "He was the bearer of bad news.",
    "Token ring networks were common in the 1990s.",
    "kubectl get secret db-creds -o yaml",
    "The AKIA prefix marks AWS keys.",
    "The secret password for the garage door is tangerine.",
]
