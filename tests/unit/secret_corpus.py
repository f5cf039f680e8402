"""A corpus of FAKE secrets, as developers paste them into a coding session, one or more cases per kind.

Every secret body comes from a seeded generator (:mod:`tests.unit.fake_secrets`), so no
literal credential sits in the source (and no scanner mistakes this file for a leak)
while each one keeps the shape its issuer publishes. Each case sits in the context it is
pasted in: a terminal line, a config file, a chat sentence. :func:`secrets` pairs a text
with the secret inside it; redaction must remove the secret. ``SECRETS`` is the corpus
for the default seed. Near-misses live in ``near_miss_corpus.py``.
"""

from __future__ import annotations

import json
import string

from tests.unit.fake_secrets import (
    B64,
    HEX,
    LOWER_ALNUM,
    UPPER32,
    UPPER_ALNUM,
    URLSAFE,
    b64,
    body,
    discord,
    jwt,
    pem,
    reseed,
    service_account,
    telegram,
    uuid4,
)
from tests.unit.secret_corpus_more import named_beside, pasted_anywhere

SEED = 20260611


def secrets(seed: int = SEED) -> list[tuple[str, str, str]]:
    """(kind, text as a developer would paste it, the secret that must not survive), drawn from ``seed``."""
    reseed(seed)
    return registries_bots_and_clouds() + pasted_anywhere() + named_beside()


def registries_bots_and_clouds() -> list[tuple[str, str, str]]:
    """Registry, container-registry, bot and cloud credentials, and provider keys."""
    key_id, sa_pem, sa_json = service_account()
    sa_b64 = b64(sa_json)
    sa_template = sa_json.replace("{", "{{").replace("}", "}}")
    ecr = b64(
        json.dumps({"payload": body(120, B64), "datakey": body(80, B64), "version": "2", "type": "DATA_KEY"})
    )
    docker_auth = b64(f"ada:dckr_pat_{body(27, URLSAFE)}")
    kube_key = b64(pem("RSA "))
    cases = [
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
            docker_auth,
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
        ("ecr", "docker login --username AWS --password {secret} 1234.dkr.ecr.eu-west-1.amazonaws.com", ecr),
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
        ("telegram", "BOT_TOKEN={secret}", telegram(body(10, string.digits))),
        (
            "telegram",
            "my telegram bot token is {secret} can you check it",
            telegram("6" + body(9, string.digits)),
        ),
        (
            "telegram",
            "curl https://api.telegram.org/bot{secret}/getUpdates",
            telegram(body(9, string.digits)),
        ),
        (
            "discord",
            "client.run('{secret}')",
            discord("MT"),
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
        ("gcp_sa", "here is the key file:\n" + sa_template.replace(sa_pem, "{secret}"), sa_pem),
        (
            "gcp_sa_key_id",
            "here is the key file:\n" + sa_template.replace(key_id, "{secret}"),
            key_id,
        ),
        ("gcp_sa_b64", "GOOGLE_CREDENTIALS_B64: {secret}", sa_b64),
        ("gcp_sa_b64", "echo {secret} | base64 -d > key.json", sa_b64),
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
            jwt('{"iss":"kubernetes/serviceaccount"}', "RS256"),
        ),
        ("kube_key", "    client-key-data: {secret}", kube_key),
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
    ]
    return [(kind, text.format(secret=secret), secret) for kind, text, secret in cases]


SECRETS = secrets()
