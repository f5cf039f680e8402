"""A corpus of FAKE secrets, as developers paste them into a coding session, one or more cases per kind.

Every secret body comes from a seeded generator, so no literal credential sits in the
source (and no scanner mistakes this file for a leak) while each one keeps the shape its
issuer publishes (prefix, alphabet, length). Each case sits in the context it is pasted
in: a terminal line, a config file, a chat sentence. ``SECRETS`` pairs a text with the
secret inside it; redaction must remove the secret. Near-misses live in
``near_miss_corpus.py``.
"""

from __future__ import annotations

import base64
import json
import random
import string

_rng = random.Random(20260611)
ALNUM = string.ascii_letters + string.digits
LOWER_ALNUM = string.ascii_lowercase + string.digits
UPPER_ALNUM = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"
UPPER32 = string.ascii_uppercase + "234567"


def body(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_rng.choice(alphabet) for _ in range(n))


def b64(raw: str, *, urlsafe: bool = False) -> str:
    encode = base64.urlsafe_b64encode if urlsafe else base64.b64encode
    return encode(raw.encode()).decode()


def uuid4() -> str:
    h = body(32, HEX)
    return f"{h[:8]}-{h[8:12]}-4{h[13:16]}-a{h[17:20]}-{h[20:]}"


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


def _jwt(claims: str = '{"sub":"1234567890","name":"Ada"}', alg: str = "HS256") -> str:
    def part(raw: str) -> str:
        return b64(raw, urlsafe=True).rstrip("=")

    return ".".join((part(f'{{"alg":"{alg}","typ":"JWT"}}'), part(claims), body(43, URLSAFE)))


def _telegram(bot_id: str) -> str:
    return bot_id + ":AA" + body(33, URLSAFE)


def _discord(first: str, last: int = 38) -> str:
    return first + body(26 - len(first)) + "." + body(6, URLSAFE) + "." + body(last, URLSAFE)


def _pem_body() -> str:
    return "\n".join(body(64, B64) for _ in range(5))


def _pem(label: str) -> str:
    return f"-----BEGIN {label}PRIVATE KEY-----\n{_pem_body()}\n-----END {label}PRIVATE KEY-----"


_SA_KEY_ID = body(40, HEX)
_SA_PEM = (
    "-----BEGIN PRIVATE KEY-----\\n"
    + body(64, B64)
    + "\\n"
    + body(64, B64)
    + "\\n-----END PRIVATE KEY-----\\n"
)
_SERVICE_ACCOUNT = {
    "type": "service_account",
    "project_id": "acme-prod-4821",
    "private_key_id": _SA_KEY_ID,
    "private_key": "PEM",
    "client_email": "deployer@acme-prod-4821.iam.gserviceaccount.com",
    "client_id": body(21, string.digits),
}
_SA_JSON = json.dumps(_SERVICE_ACCOUNT, indent=2).replace('"PEM"', '"' + _SA_PEM + '"')
_SA_B64 = b64(_SA_JSON)
_SA_TEMPLATE = _SA_JSON.replace("{", "{{").replace("}", "}}")
_ECR = b64(
    json.dumps({"payload": body(120, B64), "datakey": body(80, B64), "version": "2", "type": "DATA_KEY"})
)
_DOCKER_AUTH = b64(f"ada:dckr_pat_{body(27, URLSAFE)}")
_KUBE_KEY = b64(_pem("RSA "))
_visa = _luhn_complete("4", 16)
_mastercard = _luhn_complete("51", 16)
_amex = _luhn_complete("37", 15)
_putty_lines = "\n".join(body(64, B64) for _ in range(4))

SECRETS: list[tuple[str, str, str]] = [
    # (kind, text as a developer would paste it, the secret that must not survive)
    (s[0], s[1].format(secret=s[2]), s[2])
    for s in [
        # --- package and container registries ---
        ("npm", "$ cat ~/.npmrc\n//registry.npmjs.org/:_authToken={secret}\n", "npm_" + body(36)),
        ("npm_legacy", "//registry.npmjs.org/:_authToken={secret}", uuid4()),
        (
            "npm_auth",
            "registry=https://npm.acme.dev/\n_auth={secret}\nalways-auth=true",
            b64(f"ada:{body(14)}"),
        ),
        (
            "yarn",
            'npmRegistries:\n  "https://registry.yarnpkg.com":\n    npmAuthToken: "{secret}"',
            "npm_" + body(36),
        ),
        (
            "pypi",
            "[pypi]\n  username = __token__\n  password = {secret}",
            "pypi-AgEIcHlwaS5vcmc" + body(70, URLSAFE),
        ),
        (
            "pypi",
            "TWINE_PASSWORD={secret} twine upload dist/*",
            "pypi-AgENdGVzdC5weXBpLm9yZw" + body(60, URLSAFE),
        ),
        ("dockerhub", "$ docker login -u ada -p {secret}\nLogin Succeeded", "dckr_pat_" + body(27, URLSAFE)),
        ("dockerhub", "DOCKERHUB_TOKEN: {secret}", "dckr_pat_" + body(27, URLSAFE)),
        (
            "docker_config",
            '{{"auths": {{"https://index.docker.io/v1/": {{"auth": "{secret}"}}}}}}',
            _DOCKER_AUTH,
        ),
        (
            "quay_robot",
            'docker login -u="acme+deployer" -p="{secret}" quay.io',
            body(64, string.ascii_uppercase + string.digits),
        ),
        ("harbor_robot", "docker login harbor.acme.dev -u 'robot$ci' -p {secret}", body(32)),
        (
            "acr",
            "docker login acmeprod.azurecr.io --username acmeprod --password {secret}",
            body(42) + "+ACR" + body(6),
        ),
        ("ecr", "docker login --username AWS --password {secret} 1234.dkr.ecr.eu-west-1.amazonaws.com", _ECR),
        ("ghcr", "echo {secret} | docker login ghcr.io -u ada --password-stdin", "ghp_" + body(36)),
        ("gitlab_deploy", "CI_REGISTRY_PASSWORD: {secret}", "gldt-" + body(20, URLSAFE)),
        ("helm", "helm registry login registry.acme.dev -u ada -p {secret}", "Hx" + body(20) + "!9"),
        ("rubygems", "---\n:rubygems_api_key: {secret}", "rubygems_" + body(48, HEX)),
        (
            "nuget",
            "dotnet nuget push pkg.nupkg --api-key {secret} --source nuget.org",
            "oy2" + body(43, LOWER_ALNUM),
        ),
        ("crates", "$ cargo login {secret}\n       Login token for `crates-io` saved", "cio" + body(32)),
        (
            "jfrog",
            "curl -H 'X-JFrog-Art-Api: {secret}' https://acme.jfrog.io/artifactory/api/",
            "AKCp" + body(69),
        ),
        (
            "packagist",
            "composer config http-basic.repo.packagist.com token {secret}",
            "packagist_uat_" + body(68, HEX),
        ),
        ("clojars", "CLOJARS_PASSWORD={secret}", "CLOJARS_" + body(60, LOWER_ALNUM)),
        (
            "maven",
            "<server>\n  <id>ossrh</id>\n  <username>ada</username>\n"
            "  <password>{secret}</password>\n</server>",
            body(12) + "#2",
        ),
        ("gradle", "ossrhUsername=ada\nossrhPassword={secret}", body(16)),
        (
            "terraform",
            'credentials "app.terraform.io" {{\n  token = "{secret}"\n}}',
            body(14) + ".atlasv1." + body(67),
        ),
        ("hex", "export HEX_API_KEY={secret}", body(32, HEX)),
        # --- chat bots and webhooks ---
        ("telegram", "BOT_TOKEN={secret}", _telegram(body(10, string.digits))),
        (
            "telegram",
            "my telegram bot token is {secret} can you check it",
            _telegram("6" + body(9, string.digits)),
        ),
        (
            "telegram",
            "curl https://api.telegram.org/bot{secret}/getUpdates",
            _telegram(body(9, string.digits)),
        ),
        (
            "discord",
            "client.run('{secret}')",
            _discord("MT"),
        ),
        (
            "discord_webhook",
            "post to {secret}",
            "https://discord.com/api/webhooks/" + body(18, string.digits) + "/" + body(68, URLSAFE),
        ),
        (
            "slack_bot",
            "SLACK_BOT_TOKEN={secret}",
            "xoxb-" + body(12, string.digits) + "-" + body(13, string.digits) + "-" + body(24),
        ),
        (
            "slack_user",
            "use the user token {secret} for search",
            "xoxp-" + body(12, string.digits) + "-" + body(24),
        ),
        (
            "slack_app",
            "app-level token: {secret}",
            "xapp-1-A" + body(10, UPPER_ALNUM) + "-" + body(13, string.digits) + "-" + body(64, HEX),
        ),
        (
            "slack_webhook",
            'curl -X POST -d \'{{"text":"hi"}}\' {secret}',
            "https://hooks.slack.com/services/T"
            + body(8, UPPER_ALNUM)
            + "/B"
            + body(8, UPPER_ALNUM)
            + "/"
            + body(24),
        ),
        (
            "teams_webhook",
            "Teams incoming webhook: {secret}",
            "https://acme.webhook.office.com/webhookb2/"
            + uuid4()
            + "@"
            + uuid4()
            + "/IncomingWebhook/"
            + body(32, HEX)
            + "/"
            + uuid4(),
        ),
        ("twitch", "PASS {secret}\nNICK ada_bot", "oauth:" + body(30, LOWER_ALNUM)),
        ("mattermost", "MM_BOT_TOKEN={secret}", body(26, LOWER_ALNUM)),
        ("line", "LINE_CHANNEL_ACCESS_TOKEN={secret}", body(171, B64) + "="),
        ("meta", "WhatsApp access token {secret}", "EAAG" + body(180)),
        ("matrix", "access_token: {secret}", "syt_YWRh_" + body(20) + "_" + body(6)),
        ("bot_framework", "MicrosoftAppPassword={secret}", body(40, URLSAFE + "~.")),
        # --- clouds and service accounts ---
        ("aws", "aws_access_key_id = {secret}", "AKIA" + body(16, UPPER32)),
        ("aws", "aws_secret_access_key = {secret}", body(40, B64)),
        ("aws", "export AWS_SESSION_TOKEN={secret}", "IQoJb3JpZ2luX2VjE" + body(300, B64)),
        ("gcp_sa", "here is the key file:\n" + _SA_TEMPLATE.replace(_SA_PEM, "{secret}"), _SA_PEM),
        (
            "gcp_sa_key_id",
            "here is the key file:\n" + _SA_TEMPLATE.replace(_SA_KEY_ID, "{secret}"),
            _SA_KEY_ID,
        ),
        ("gcp_sa_b64", "GOOGLE_CREDENTIALS_B64: {secret}", _SA_B64),
        ("gcp_sa_b64", "echo {secret} | base64 -d > key.json", _SA_B64),
        ("gcp_api", 'const firebaseConfig = {{ apiKey: "{secret}" }}', "AIza" + body(35, URLSAFE)),
        ("gcp_oauth", "Authorization header was ya29 token {secret}", "ya29.a0" + body(120, URLSAFE)),
        ("gcp_oauth", "refresh_token: {secret}", "1//0" + body(60, URLSAFE)),
        ("gcp_oauth", '"client_secret": "{secret}"', "GOCSPX-" + body(28, URLSAFE)),
        ("gcs_hmac", "HMAC access id {secret}", "GOOG1E" + body(55, UPPER_ALNUM)),
        (
            "azure_storage",
            "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={secret};EndpointSuffix=core.windows.net",
            body(76, B64) + "+ASt" + body(6, B64) + "==",
        ),
        (
            "azure_sas",
            "https://acct.blob.core.windows.net/c/f.txt?sv=2022-11-02&sp=r&sig={secret}",
            body(30) + "%2B" + body(10) + "%3D",
        ),
        (
            "azure_sp",
            '{{\n  "appId": "{app}",\n  "password": "{secret}",\n  "tenant": "{app}"\n}}'.replace(
                "{app}", uuid4()
            ),
            body(3) + "8Q~" + body(34, URLSAFE + "~."),
        ),
        (
            "azure_client_secret",
            "the client secret from the portal: {secret}",
            body(3) + "8Q~" + body(34, URLSAFE + "~."),
        ),
        (
            "azure_devops",
            "git clone https://ada:{secret}@dev.azure.com/acme/proj/_git/repo",
            body(52, "abcdefghijklmnopqrstuvwxyz234567"),
        ),
        (
            "azure_openai",
            "curl -H 'api-key: {secret}' https://acme.openai.azure.com/openai/deployments",
            body(32, HEX),
        ),
        ("alibaba", "ALIBABA_CLOUD_ACCESS_KEY_ID={secret}", "LTAI5t" + body(18)),
        ("tencent", "SecretId: {secret}", "AKID" + body(32)),
        ("digitalocean", "doctl auth init -t {secret}", "dop_v1_" + body(64, HEX)),
        ("heroku", "HEROKU_API_KEY={secret}", "HRKU-AA" + body(58, URLSAFE)),
        ("heroku_legacy", "heroku api key {secret}", uuid4()),
        ("cloudflare", "export CLOUDFLARE_API_TOKEN={secret}", body(40, URLSAFE)),
        ("flyio", "FLY_API_TOKEN={secret}", "FlyV1 fm2_" + body(200, B64)),
        ("vercel", "VERCEL_TOKEN={secret}", body(24)),
        ("netlify", "netlify token {secret}", "nfp_" + body(36)),
        ("supabase", "supabase login --token {secret}", "sbp_" + body(40, HEX)),
        ("ibm", '{{"apikey": "{secret}", "iam_apikey_name": "ci"}}', body(44, URLSAFE)),
        (
            "kube_token",
            "users:\n- name: ci\n  user:\n    token: {secret}",
            _jwt('{"iss":"kubernetes/serviceaccount"}', "RS256"),
        ),
        ("kube_key", "    client-key-data: {secret}", _KUBE_KEY),
        ("vault", "VAULT_TOKEN={secret}", "hvs." + body(90, URLSAFE)),
        ("doppler", "DOPPLER_TOKEN={secret}", "dp.st.prd." + body(43)),
        ("onepassword", "OP_SERVICE_ACCOUNT_TOKEN={secret}", "ops_eyJ" + body(200, URLSAFE)),
        ("pulumi", "pulumi login with {secret}", "pul-" + body(40, HEX)),
        ("databricks", "DATABRICKS_TOKEN={secret}", "dapi" + body(32, HEX)),
        ("grafana", "grafana service account token {secret}", "glsa_" + body(32) + "_" + body(8, HEX)),
        ("sentry", "SENTRY_AUTH_TOKEN={secret}", "sntrys_eyJ" + body(120, URLSAFE)),
        ("newrelic", "NEW_RELIC_API_KEY={secret}", "NRAK-" + body(27, UPPER_ALNUM)),
        ("datadog", "DD_API_KEY={secret}", body(32, HEX)),
        # --- model providers and code hosts ---
        ("openai", "My OpenAI key is {secret}, keep it safe.", "sk-proj-" + body(48)),
        ("anthropic", "ANTHROPIC_API_KEY={secret}", "sk-ant-api03-" + body(93, URLSAFE) + "AA"),
        ("anthropic_admin", "admin key {secret}", "sk-ant-admin01-" + body(93, URLSAFE) + "AA"),
        ("openrouter", "OPENROUTER_API_KEY={secret}", "sk-or-v1-" + body(64, HEX)),
        ("groq", "groq key {secret}", "gsk_" + body(52)),
        ("huggingface", "huggingface-cli login --token {secret}", "hf_" + body(34)),
        ("replicate", "export REPLICATE_API_TOKEN={secret}", "r8_" + body(37)),
        ("mistral", "MISTRAL_API_KEY={secret}", body(32)),
        ("github", "git push https://{secret}@github.com/acme/app.git", "ghp_" + body(36)),
        ("github", "fine-grained token {secret}", "github_pat_" + body(22) + "_" + body(59)),
        ("github_oauth", "gh auth status shows token {secret}", "gho_" + body(36)),
        ("gitlab", "GitLab PAT: {secret}", "glpat-" + body(20, URLSAFE)),
        ("gitlab_runner", "gitlab-runner register --token {secret}", "glrt-" + body(20, URLSAFE)),
        ("bitbucket", "Bitbucket app password {secret}", "ATBB" + body(32)),
        ("atlassian", "JIRA_API_TOKEN={secret}", "ATATT3xFfGF0" + body(180, URLSAFE)),
        # --- payments, mail, workspaces ---
        ("stripe", "Charge with {secret} in production.", "sk_" + "live_" + body(24)),
        ("stripe", "the restricted key is {secret}", "rk_" + "live_" + body(24)),
        ("stripe", "STRIPE_WEBHOOK_SECRET={secret}", "whsec_" + body(32)),
        ("square", "SQUARE_ACCESS_TOKEN={secret}", "EAAA" + body(60, URLSAFE)),
        (
            "braintree",
            "gateway = braintree.BraintreeGateway(access_token='{secret}')",
            "access_token$production$" + body(16, LOWER_ALNUM) + "$" + body(32, HEX),
        ),
        ("shopify", "Shopify admin token {secret}", "shpat_" + body(32, HEX)),
        ("twilio", "TWILIO_AUTH_TOKEN={secret}", body(32, HEX)),
        ("twilio", "Twilio API key {secret}", "SK" + body(32, HEX)),
        ("sendgrid", "SendGrid: {secret}", "SG." + body(22, URLSAFE) + "." + body(43, URLSAFE)),
        ("mailgun", "mailgun key {secret}", "key-" + body(32, HEX)),
        ("mailchimp", "Mailchimp key {secret}", body(32, HEX) + "-us12"),
        ("notion", "NOTION_TOKEN={secret}", "ntn_" + body(11, string.digits) + body(35)),
        ("airtable", "airtable pat {secret}", "pat" + body(14) + "." + body(64, HEX)),
        ("figma", "X-Figma-Token: {secret}", "figd_" + body(40, URLSAFE)),
        ("linear", "linear api key {secret}", "lin_api_" + body(40)),
        ("postman", "postman key {secret}", "PMAK-" + body(24, HEX) + "-" + body(34, HEX)),
        # --- keys, tokens and URLs of any provider ---
        ("jwt", "session cookie {secret}", _jwt()),
        ("pem", "deploy key:\n{secret}\nuse it for prod", _pem("RSA ")),
        ("pem", "$ cat ~/.ssh/id_ed25519\n{secret}", _pem("OPENSSH ")),
        ("pem", "{secret}", _pem("EC ")),
        (
            "pgp",
            "{secret}",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
            + _pem_body()
            + "\n-----END PGP PRIVATE KEY BLOCK-----",
        ),
        (
            "putty",
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ada\nPrivate-Lines: 4\n{secret}",
            _putty_lines,
        ),
        ("age", "# created: 2024\n{secret}", "AGE-SECRET-KEY-1" + body(58, UPPER_ALNUM)),
        ("bearer", "curl -H 'Authorization: Bearer {secret}' https://api.example.com", body(40, URLSAFE)),
        ("basic", "Authorization: Basic {secret}", b64(f"admin:{body(12)}")),
        (
            "basic_short",
            "curl -H 'Authorization: Basic {secret}' http://ci.acme.dev",
            b64("ci:" + body(6, string.ascii_letters)),
        ),
        ("url", "DATABASE_URL=postgres://app_user:{secret}@db.internal:5432/prod", body(16)),
        ("url", "connect with mysql://root:{secret}@localhost/shop", "Hunter2Pass" + body(4)),
        ("url", "git remote add origin https://deploy:{secret}@git.example.com/team/repo.git", body(20)),
        ("url", "mongodb+srv://admin:{secret}@cluster0.abcde.mongodb.net/test", body(18)),
        ("url", "cache at redis://:{secret}@cache:6379/0", body(24)),
        ("url", "BROKER_URL=amqp://svc:{secret}@rabbit:5672//", body(14)),
        ("jdbc", "jdbc:postgresql://db:5432/app?user=app&password={secret}&ssl=true", body(14)),
        (
            "odbc",
            "Server=tcp:db.acme.net,1433;Database=app;User ID=sa;Password={secret};Encrypt=true",
            body(10) + "!1",
        ),
        ("netrc", "machine api.heroku.com\n  login ada@acme.dev\n  password {secret}", body(20)),
        ("netrc", "machine github.com login ada password {secret}", "s3cret-" + body(8)),
        ("curl_user", "curl -u admin:{secret} https://jenkins.acme.dev/api/json", body(12)),
        ("mysql_flag", "mysql -h db -u root -p{secret} shop < dump.sql", body(10) + "9"),
        ("sshpass", "sshpass -p '{secret}' ssh ada@10.0.0.5", body(12)),
        ("redis_cli", "redis-cli -h cache -a {secret} ping", body(20)),
        ("password_flag", "./deploy.sh --db-password {secret} --env prod", body(14)),
        ("password_flag", "psql --password={secret}", body(12)),
        ("env", "DB_PASSWORD={secret}", "Tr0ub4dor&3x"),
        ("env", "export PAYMENTS_SECRET={secret}", body(24)),
        ("env", "  SESSION_SECRET: {secret}", body(48, HEX)),
        ("json", '{{"api_key": "{secret}", "region": "eu"}}', body(32)),
        ("yaml", "auth:\n  client_secret: {secret}\n  scope: read", body(30, URLSAFE)),
        ("yaml", "database:\n  user: app\n  password: {secret}\n  host: db", "hunter2"),
        ("header", "x-api-key: {secret}", body(40)),
        ("python", 'client = Client(token="{secret}")', body(28)),
        ("dotnet", '<add key="ApiSecret" value="{secret}" />', body(24)),
        ("card", "Visa {secret} exp 12/29", " ".join(_visa[i : i + 4] for i in range(0, 16, 4))),
        ("card", "card: {secret}", "-".join(_mastercard[i : i + 4] for i in range(0, 16, 4))),
        ("card", "amex {secret}", _amex),
        # --- passwords written in a sentence ---
        ("prose", "my password is {secret}", "hunter2"),
        ("prose", "the db pw is {secret} btw", "Zebra!Cactus9"),
        ("prose", "use {secret} as the password", "Tr0ub4dor&3"),
        ("prose", "The secret password for the garage door is {secret}.", "tangerine"),
        ("prose", "the wifi password: {secret}", "Tr0ub4dor&3"),
        ("prose", "ok I set the root password to {secret} on staging", "Summer2024!"),
        ("prose", "login as admin with password {secret} and check the logs", "Adm1n#2024"),
        ("prose", "the password for the prod database is '{secret}'", "correct horse battery staple"),
        ("prose", "creds: admin/{secret}", "Welcome123"),
        ("prose", "Das Passwort ist {secret}", "Sommer2024!"),
        ("prose", "le mot de passe est {secret}", "Soleil#42"),
        ("prose", "la contraseña es {secret}", "Verano2024$"),
        ("prose", "my api key is {secret}, please keep it private", body(32, HEX)),
        # --- the same kinds, pasted another way ---
        ("gcp_der_key", '"private_key": "{secret}\\n",', "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + body(64, B64)),
        (
            "zulip_bot",
            "[api]\nemail=helper-bot@chat.acme.dev\nkey={secret}\nsite=https://chat.acme.dev",
            body(32),
        ),
        ("acr_token", '{{"name": "password1", "value": "{secret}"}}', body(42) + "+ACR" + body(6)),
        ("irc", "/msg NickServ IDENTIFY {secret}", body(8) + "7"),
        ("wechat", "WECHAT_APPSECRET={secret}", body(32, HEX)),
        ("pass_colon", "user: ada pass: {secret}", body(10) + "!"),
        ("npm_password", "//npm.acme.dev/:_password={secret}", b64(body(12, string.ascii_letters))),
        ("npm config set", "npm config set //registry.npmjs.org/:_authToken {secret}", uuid4()),
        ("npm env", "NODE_AUTH_TOKEN={secret} npm publish", "npm_" + body(36)),
        ("npm _password", "//npm.acme.dev/:_password={secret}", b64(body(12))),
        ("poetry", "poetry config pypi-token.pypi {secret}", "pypi-AgEIcHlwaS5vcmc" + body(80, URLSAFE)),
        ("uv", "UV_PUBLISH_TOKEN={secret} uv publish", "pypi-AgEIcHlwaS5vcmc" + body(80, URLSAFE)),
        ("pip url", "pip install -i https://ada:{secret}@pypi.acme.dev/simple acme-lib", body(18)),
        ("gem", "GEM_HOST_API_KEY: {secret}", "rubygems_" + body(48, HEX)),
        ("cargo publish", "cargo publish --token {secret}", "cio" + body(32)),
        (
            "nuget setapikey",
            "nuget setapikey {secret} -source https://api.nuget.org/v3/index.json",
            "oy2" + body(43, LOWER_ALNUM),
        ),
        ("podman", "podman login quay.io --username acme+bot --password {secret}", body(64, UPPER_ALNUM)),
        ("skopeo", "skopeo copy --dest-creds acme+bot:{secret} docker://a docker://b", body(64, UPPER_ALNUM)),
        (
            "kubectl regcred",
            "kubectl create secret docker-registry regcred --docker-server=ghcr.io --docker-username=ada "
            "--docker-password={secret}",
            body(24),
        ),
        (
            "dockerconfigjson",
            "  .dockerconfigjson: {secret}",
            b64(json.dumps({"auths": {"ghcr.io": {"auth": b64("ada:" + body(20))}}})),
        ),
        ("docker -p harbor", "docker login -u 'robot$acme+ci' -p '{secret}' harbor.acme.dev", body(32)),
        (
            "acr az output",
            '"passwords": [\n  {{\n    "name": "password",\n    "value": "{secret}"\n  }}',
            body(32, B64),
        ),
        ("k8s env", "env:\n  - name: REGISTRY_PASSWORD\n    value: {secret}", body(20)),
        ("crane", "crane auth login registry.acme.dev -u ada -p {secret}", body(22)),
        ("telebot", 'bot = telebot.TeleBot("{secret}")', _telegram(body(10, string.digits))),
        ("telegram docs", "token: {secret}", body(6, string.digits) + ":" + body(35, URLSAFE)),
        (
            "telegram sentence",
            "here's the bot token {secret} from BotFather",
            _telegram(body(10, string.digits)),
        ),
        (
            "discord env",
            "DISCORD_TOKEN={secret}",
            _discord("OT", 27),
        ),
        (
            "discord sentence",
            "my discord bot token: {secret}",
            _discord("MTE"),
        ),
        ("slack signing", "SLACK_SIGNING_SECRET={secret}", body(32, HEX)),
        (
            "slack sentence",
            "the slack bot token is {secret}",
            "xoxb-" + body(13, string.digits) + "-" + body(13, string.digits) + "-" + body(24),
        ),
        ("line secret", "LINE_CHANNEL_SECRET={secret}", body(32, HEX)),
        (
            "aws configure",
            "$ aws configure\nAWS Access Key ID [None]: AKIA"
            + body(16, UPPER_ALNUM)
            + "\nAWS Secret Access Key [None]: {secret}\nDefault region name [None]: eu-west-1",
            body(40, B64),
        ),
        (
            "aws json",
            '{{\n  "AccessKey": {{\n    "UserName": "ci",\n    "AccessKeyId": "AKIA'
            + body(16, UPPER_ALNUM)
            + '",\n    "SecretAccessKey": "{secret}"\n  }}\n}}',
            body(40, B64),
        ),
        (
            "az sp login",
            "az login --service-principal -u " + uuid4() + " -p {secret} --tenant " + uuid4(),
            body(3) + "8Q~" + body(34, URLSAFE),
        ),
        ("gcp sa sentence", "the service account key is {secret}", _SA_B64),
        ("oci passphrase", "pass_phrase={secret}", body(16)),
        (
            "gcp private key only",
            '"private_key": "-----BEGIN PRIVATE KEY-----\\n{secret}\\n-----END PRIVATE KEY-----\\n"',
            body(64, B64),
        ),
        ("pw possessive", "my new password's {secret}", "Hunter2024"),
        ("pw changed to", "the password was changed to {secret} yesterday", "Blue$ky77"),
        ("pw use", "just use password {secret} for now", "Welcome1!"),
        ("pw for email", "Password for ada@acme.dev: {secret}", "Tr0ub4dor&3"),
        ("pw using as", "I'm using {secret} as my password for the vpn", "Autumn#2023"),
        ("pw username", "username ada password {secret}", "ada12345"),
        ("pw capital", "Password hunter3 doesn't work any more", "hunter3"),
        ("pw german colon", "Kennwort: {secret}", "Geheim123"),
        ("pw french", "Mot de passe : {secret}", "Bonjour2024"),
        ("pw quoted", 'the password is "{secret}"', "correct horse battery"),
        ("pw plain end", "The vpn password is {secret}", "marmalade"),
        ("pw it's", "the wifi password? it's {secret}", "Kaffee2024"),
        ("passphrase", "the passphrase for the key is {secret}", "purple-monkey-dishwasher-7"),
    ]
]
