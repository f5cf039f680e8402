"""Secrets of any provider and passwords, as pasted: keys, URLs, command lines, config lines, sentences."""

from __future__ import annotations

import json
import string

from tests.unit import fake_secrets as fake


def pasted_anywhere() -> list[tuple[str, str, str]]:
    """Keys of any provider, URLs, command lines, config lines, passwords in sentences."""
    _, _, sa_json = fake.service_account()
    sa_b64 = fake.b64(sa_json)
    visa = fake.luhn_complete("4", 16)
    mastercard = fake.luhn_complete("51", 16)
    amex = fake.luhn_complete("37", 15)
    putty_lines = "\n".join(fake.body(64, fake.B64) for _ in range(4))
    cases = [
        # --- keys, tokens and URLs of any provider ---
        ("jwt", "session cookie {secret}", fake.jwt()),
        ("pem", "deploy key:\n{secret}\nuse it for prod", fake.pem("RSA ")),
        ("pem", "$ cat ~/.ssh/id_ed25519\n{secret}", fake.pem("OPENSSH ")),
        ("pem", "{secret}", fake.pem("EC ")),
        (
            "pgp",
            "{secret}",
            "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\n"
            + fake.pem_body()
            + "\n-----END PGP PRIVATE KEY BLOCK-----",
        ),
        (
            "putty",
            "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: ada\nPrivate-Lines: 4\n{secret}",
            putty_lines,
        ),
        ("age", "# created: 2024\n{secret}", "AGE-SECRET-KEY-1" + fake.body(58, fake.UPPER_ALNUM)),
        (
            "bearer",
            "curl -H 'Authorization: Bearer {secret}' https://api.example.com",
            fake.body(40, fake.URLSAFE),
        ),
        ("basic", "Authorization: Basic {secret}", fake.b64(f"admin:{fake.body(12)}")),
        (
            "basic_short",
            "curl -H 'Authorization: Basic {secret}' http://ci.acme.dev",
            fake.b64("ci:" + fake.body(6, string.ascii_letters)),
        ),
        ("url", "DATABASE_URL=postgres://app_user:{secret}@db.internal:5432/prod", fake.body(16)),
        ("url", "connect with mysql://root:{secret}@localhost/shop", "Hunter2Pass" + fake.body(4)),
        ("url", "git remote add origin https://deploy:{secret}@git.example.com/team/repo.git", fake.body(20)),
        ("url", "mongodb+srv://admin:{secret}@cluster0.abcde.mongodb.net/test", fake.body(18)),
        ("url", "cache at redis://:{secret}@cache:6379/0", fake.body(24)),
        ("url", "BROKER_URL=amqp://svc:{secret}@rabbit:5672//", fake.body(14)),
        ("jdbc", "jdbc:postgresql://db:5432/app?user=app&password={secret}&ssl=true", fake.body(14)),
        (
            "odbc",
            "Server=tcp:db.acme.net,1433;Database=app;User ID=sa;Password={secret};Encrypt=true",
            fake.body(10) + "!1",
        ),
        ("netrc", "machine api.heroku.com\n  login ada@acme.dev\n  password {secret}", fake.body(20)),
        ("netrc", "machine github.com login ada password {secret}", "s3cret-" + fake.body(8)),
        ("curl_user", "curl -u admin:{secret} https://jenkins.acme.dev/api/json", fake.body(12)),
        ("mysql_flag", "mysql -h db -u root -p{secret} shop < dump.sql", fake.body(10) + "9"),
        ("sshpass", "sshpass -p '{secret}' ssh ada@10.0.0.5", fake.body(12)),
        ("redis_cli", "redis-cli -h cache -a {secret} ping", fake.body(20)),
        ("password_flag", "./deploy.sh --db-password {secret} --env prod", fake.body(14)),
        ("password_flag", "psql --password={secret}", fake.body(12)),
        ("env", "DB_PASSWORD={secret}", "Tr0ub4dor&3x"),
        ("env", "export PAYMENTS_SECRET={secret}", fake.body(24)),
        ("env", "  SESSION_SECRET: {secret}", fake.body(48, fake.HEX)),
        ("json", '{{"api_key": "{secret}", "region": "eu"}}', fake.body(32)),
        ("yaml", "auth:\n  client_secret: {secret}\n  scope: read", fake.body(30, fake.URLSAFE)),
        ("yaml", "database:\n  user: app\n  password: {secret}\n  host: db", "hunter2"),
        ("header", "x-api-key: {secret}", fake.body(40)),
        ("python", 'client = Client(token="{secret}")', fake.body(28)),
        ("dotnet", '<add key="ApiSecret" value="{secret}" />', fake.body(24)),
        ("card", "Visa {secret} exp 12/29", " ".join(visa[i : i + 4] for i in range(0, 16, 4))),
        ("card", "card: {secret}", "-".join(mastercard[i : i + 4] for i in range(0, 16, 4))),
        ("card", "amex {secret}", amex),
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
        ("prose", "my api key is {secret}, please keep it private", fake.body(32, fake.HEX)),
        # --- the same kinds, pasted another way ---
        (
            "gcp_der_key",
            '"private_key": "{secret}\\n",',
            "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC" + fake.body(64, fake.B64),
        ),
        (
            "zulip_bot",
            "[api]\nemail=helper-bot@chat.acme.dev\nkey={secret}\nsite=https://chat.acme.dev",
            fake.body(32),
        ),
        ("acr_token", '{{"name": "password1", "value": "{secret}"}}', fake.body(42) + "+ACR" + fake.body(6)),
        ("irc", "/msg NickServ IDENTIFY {secret}", fake.body(8) + "7"),
        ("wechat", "WECHAT_APPSECRET={secret}", fake.body(32, fake.HEX)),
        ("pass_colon", "user: ada pass: {secret}", fake.body(10) + "!"),
        ("npm_password", "//npm.acme.dev/:_password={secret}", fake.b64(fake.body(12, string.ascii_letters))),
        ("npm config set", "npm config set //registry.npmjs.org/:_authToken {secret}", fake.uuid4()),
        ("npm env", "NODE_AUTH_TOKEN={secret} npm publish", "npm_" + fake.body(36)),
        ("npm _password", "//npm.acme.dev/:_password={secret}", fake.b64(fake.body(12))),
        (
            "poetry",
            "poetry config pypi-token.pypi {secret}",
            "pypi-AgEIcHlwaS5vcmc" + fake.body(80, fake.URLSAFE),
        ),
        ("uv", "UV_PUBLISH_TOKEN={secret} uv publish", "pypi-AgEIcHlwaS5vcmc" + fake.body(80, fake.URLSAFE)),
        ("pip url", "pip install -i https://ada:{secret}@pypi.acme.dev/simple acme-lib", fake.body(18)),
        ("gem", "GEM_HOST_API_KEY: {secret}", "rubygems_" + fake.body(48, fake.HEX)),
        ("cargo publish", "cargo publish --token {secret}", "cio" + fake.body(32)),
        (
            "nuget setapikey",
            "nuget setapikey {secret} -source https://api.nuget.org/v3/index.json",
            "oy2" + fake.body(43, fake.LOWER_ALNUM),
        ),
        (
            "podman",
            "podman login quay.io --username acme+bot --password {secret}",
            fake.body(64, fake.UPPER_ALNUM),
        ),
        (
            "skopeo",
            "skopeo copy --dest-creds acme+bot:{secret} docker://a docker://b",
            fake.body(64, fake.UPPER_ALNUM),
        ),
        (
            "kubectl regcred",
            "kubectl create secret docker-registry regcred --docker-server=ghcr.io --docker-username=ada "
            "--docker-password={secret}",
            fake.body(24),
        ),
        (
            "dockerconfigjson",
            "  .dockerconfigjson: {secret}",
            fake.b64(json.dumps({"auths": {"ghcr.io": {"auth": fake.b64("ada:" + fake.body(20))}}})),
        ),
        ("docker -p harbor", "docker login -u 'robot$acme+ci' -p '{secret}' harbor.acme.dev", fake.body(32)),
        (
            "acr az output",
            '"passwords": [\n  {{\n    "name": "password",\n    "value": "{secret}"\n  }}',
            fake.body(32, fake.B64),
        ),
        ("k8s env", "env:\n  - name: REGISTRY_PASSWORD\n    value: {secret}", fake.body(20)),
        ("crane", "crane auth login registry.acme.dev -u ada -p {secret}", fake.body(22)),
        ("telebot", 'bot = telebot.TeleBot("{secret}")', fake.telegram(fake.body(10, string.digits))),
        ("telegram docs", "token: {secret}", fake.body(6, string.digits) + ":" + fake.body(35, fake.URLSAFE)),
        (
            "telegram sentence",
            "here's the bot token {secret} from BotFather",
            fake.telegram(fake.body(10, string.digits)),
        ),
        (
            "discord env",
            "DISCORD_TOKEN={secret}",
            fake.discord("OT", 27),
        ),
        (
            "discord sentence",
            "my discord bot token: {secret}",
            fake.discord("MTE"),
        ),
        ("slack signing", "SLACK_SIGNING_SECRET={secret}", fake.body(32, fake.HEX)),
        (
            "slack sentence",
            "the slack bot token is {secret}",
            "xoxb-" + fake.body(13, string.digits) + "-" + fake.body(13, string.digits) + "-" + fake.body(24),
        ),
        ("line secret", "LINE_CHANNEL_SECRET={secret}", fake.body(32, fake.HEX)),
        (
            "aws configure",
            "$ aws configure\nAWS Access Key ID [None]: AKIA"
            + fake.body(16, fake.UPPER_ALNUM)
            + "\nAWS Secret Access Key [None]: {secret}\nDefault region name [None]: eu-west-1",
            fake.body(40, fake.B64),
        ),
        (
            "aws json",
            '{{\n  "AccessKey": {{\n    "UserName": "ci",\n    "AccessKeyId": "AKIA'
            + fake.body(16, fake.UPPER_ALNUM)
            + '",\n    "SecretAccessKey": "{secret}"\n  }}\n}}',
            fake.body(40, fake.B64),
        ),
        (
            "az sp login",
            "az login --service-principal -u " + fake.uuid4() + " -p {secret} --tenant " + fake.uuid4(),
            fake.body(3) + "8Q~" + fake.body(34, fake.URLSAFE),
        ),
        ("gcp sa sentence", "the service account key is {secret}", sa_b64),
        ("oci passphrase", "pass_phrase={secret}", fake.body(16)),
        (
            "gcp private key only",
            '"private_key": "-----BEGIN PRIVATE KEY-----\\n{secret}\\n-----END PRIVATE KEY-----\\n"',
            fake.body(64, fake.B64),
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
        # --- pasted in yet other ways ---
        (
            "npmrc github",
            "@acme:registry=https://npm.pkg.github.com\n//npm.pkg.github.com/:_authToken={secret}",
            "ghp_" + fake.body(36),
        ),
        ("yarnrc v1", '"//registry.npmjs.org/:_authToken" "{secret}"', "npm_" + fake.body(36)),
        (
            "pypirc testpypi",
            "[testpypi]\nrepository = https://test.pypi.org/legacy/\n"
            "username = __token__\npassword = {secret}",
            "pypi-AgENdGVzdC5weXBpLm9yZw" + fake.body(70, fake.URLSAFE),
        ),
        (
            "twine cli",
            "twine upload -u __token__ -p {secret} dist/*",
            "pypi-AgEIcHlwaS5vcmc" + fake.body(70, fake.URLSAFE),
        ),
        (
            "gem credentials",
            "$ cat ~/.gem/credentials\n---\n:rubygems_api_key: {secret}\n",
            "rubygems_" + fake.body(48, fake.HEX),
        ),
        ("cargo creds", '[registry]\ntoken = "{secret}"', "cio" + fake.body(32)),
        (
            "docker hub chat",
            "here's my docker hub token {secret}, can you push the image?",
            "dckr_pat_" + fake.body(27, fake.URLSAFE),
        ),
        ("quay env", "QUAY_ROBOT_TOKEN={secret}", fake.body(64, fake.UPPER_ALNUM)),
        ("harbor json", '{{"name": "robot$ci", "secret": "{secret}"}}', fake.body(32)),
        (
            "acr admin",
            "az acr credential show -n acme --query passwords[0].value -o tsv\n{secret}",
            fake.body(42) + "+ACR" + fake.body(6),
        ),
        (
            "gcr json key b64",
            "docker login -u _json_key_base64 -p {secret} https://gcr.io",
            fake.b64(fake.service_account()[2]),
        ),
        (
            "telegram yaml",
            'telegram:\n  bot_token: "{secret}"\n  chat_id: 123456',
            fake.telegram(fake.body(10, string.digits)),
        ),
        (
            "telegram url py",
            'requests.get(f"https://api.telegram.org/bot{secret}/sendMessage")',
            fake.telegram(fake.body(9, string.digits)),
        ),
        ("discord py", 'bot.run("{secret}")', fake.discord("MT")),
        (
            "slack app env",
            "SLACK_APP_TOKEN={secret}",
            "xapp-1-A"
            + fake.body(10, fake.UPPER_ALNUM)
            + "-"
            + fake.body(13, string.digits)
            + "-"
            + fake.body(64, fake.HEX),
        ),
        (
            "gcp sa inline",
            'key = {{"type": "service_account", "private_key_id": "{secret}", '
            '"client_email": "a@b.iam.gserviceaccount.com"}}',
            fake.body(40, fake.HEX),
        ),
        (
            "gcp sa pk",
            "the private_key field is -----BEGIN PRIVATE KEY-----\\n{secret}\\n-----END PRIVATE KEY-----",
            fake.body(64, fake.B64),
        ),
        (
            "aws creds file",
            "[default]\naws_access_key_id = AKIA"
            + fake.body(16, fake.UPPER32)
            + "\naws_secret_access_key = {secret}",
            fake.body(40, fake.B64),
        ),
        ("azure sp env", "ARM_CLIENT_SECRET={secret}", fake.body(3) + "8Q~" + fake.body(34, fake.URLSAFE)),
        (
            "pw sentence 1",
            "fyi the staging db password is {secret}",
            fake.body(6, string.ascii_lowercase) + fake.body(3, string.digits),
        ),
        (
            "pw sentence 2",
            "I set my laptop password to {secret} yesterday",
            "Winter" + fake.body(4, string.digits) + "!",
        ),
        ("pw sentence 3", "password for the admin panel: {secret}", fake.body(12)),
        ("pw sentence 4", "my github password is {secret} and my email is ada@acme.dev", fake.body(8) + "#1"),
        ("pw sentence 6", "The root password was {secret}.", fake.body(9, string.ascii_letters) + "7"),
        ("pw sentence 7", "wifi: AcmeGuest / password: {secret}", fake.body(10)),
    ]
    return [(kind, text.format(secret=secret), secret) for kind, text, secret in cases]


B64 = fake.B64


def named_beside() -> list[tuple[str, str, str]]:
    """Secrets with no shape of their own, known by the key id beside them or the word naming them."""
    key_id = "AKIA" + fake.body(16, fake.UPPER32)
    cases = [
        ("aws pair slash", f"Here is the AWS pair ({key_id} / {{secret}}) for the backup bucket.", fake.B64),
        ("aws pair id:secret", f"creds for the CI user: {key_id}:{{secret}}", fake.B64),
        ("aws key id with secret", f"Use key id {key_id} with secret {{secret}} for the uploads.", fake.B64),
        ("aws export", f"export AWS_ACCESS_KEY_ID={key_id}\nexport AWS_SECRET_ACCESS_KEY={{secret}}", B64),
        ("aws ini", f"aws_access_key_id={key_id}\naws_secret_access_key={{secret}}", fake.B64),
        ("token in a sentence", "Here's the deploy token for staging, keep it safe: {secret}", fake.URLSAFE),
        ("secret over two lines", "The signing secret of the webhook we set up\nyesterday is {secret}.", B64),
        ("password made up", "I generated a new admin password for you → {secret}", fake.B64),
        ("key in parentheses", "The Mapbox key (the prod one) ends up as {secret} in the build.", fake.ALNUM),
    ]
    out = []
    for kind, text, alphabet in cases:
        secret = fake.body(40, alphabet)
        while not (set(secret) & set("0123456789")):  # a value with no digit reads as a word
            secret = fake.body(40, alphabet)
        out.append((kind, text.format(secret=secret), secret))
    return out
