"""detect-secrets' token formats, key names and entropy test, copied from the library.

Written by `python tests/test_secret_formats.py` from detect-secrets 1.5.0; do
not edit by hand. tests/test_secret_formats.py fails when the installed library differs.

Why a copy: detect-secrets' plugins cannot be imported without its whole package, whose
`__init__` loads its scanner, filters and settings, and whose plugin base imports
`requests` (for its verification step, which kenning never runs): 60-120 ms of CPU on
every daemon start and every parse worker start, for a table of regexes.
"""

import re

VERSION = '1.5.0'

# Each `RegexBasedDetector` plugin's deny-list but the public-IP and private-key ones (a
# public address is not a credential; a private key's secret is its body, not the BEGIN
# line the plugin finds): (secret type, pattern, flags).
TOKEN_PATTERNS: tuple[tuple[str, str, int], ...] = (
    ('Artifactory Credentials', '(?:\\s|=|:|"|^)AKC[a-zA-Z0-9]{10,}(?:\\s|"|$)', re.UNICODE),
    ('Artifactory Credentials', '(?:\\s|=|:|"|^)AP[\\dABCDEF][a-zA-Z0-9]{8,}(?:\\s|"|$)', re.UNICODE),
    ('AWS Access Key', '(?:A3T[A-Z0-9]|ABIA|ACCA|AKIA|ASIA)[0-9A-Z]{16}', re.UNICODE),
    ('AWS Access Key', 'aws.{0,20}?(?:key|pwd|pw|password|pass|token).{0,20}?[\\\'\\"]([0-9a-zA-Z/+]{40})[\\\'\\"]', re.IGNORECASE|re.UNICODE),
    ('Azure Storage Account access key', 'AccountKey=[a-zA-Z0-9+\\/=]{88}', re.UNICODE),
    ('Basic Auth Credentials', "://[^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s]+:([^:/\\?\\#\\[\\]@!\\$\\&'\\(\\)\\*\\+,;=\\s]+)@", re.UNICODE),
    ('Cloudant Credentials', '(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:cloudant|cl|clou)(?:_|-|)(?:api|)(?:key|pwd|pw|password|pass|token)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([0-9a-f]{64})(?:"|\\\'|)', re.IGNORECASE|re.UNICODE),
    ('Cloudant Credentials', '(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:cloudant|cl|clou)(?:_|-|)(?:api|)(?:key|pwd|pw|password|pass|token)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([a-z]{24})(?:"|\\\'|)', re.IGNORECASE|re.UNICODE),
    ('Cloudant Credentials', '(?:https?\\:\\/\\/)[\\w\\-]+\\:([0-9a-f]{64})\\@[\\w\\-]+\\.cloudant\\.com', re.IGNORECASE|re.UNICODE),
    ('Cloudant Credentials', '(?:https?\\:\\/\\/)[\\w\\-]+\\:([a-z]{24})\\@[\\w\\-]+\\.cloudant\\.com', re.IGNORECASE|re.UNICODE),
    ('Discord Bot Token', '[MNO][a-zA-Z\\d_-]{23,25}\\.[a-zA-Z\\d_-]{6}\\.[a-zA-Z\\d_-]{27}', re.UNICODE),
    ('GitHub Token', '(ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9_]{36}', re.UNICODE),
    ('GitLab Token', '(glpat|gldt|glft|glsoat|glrt)-[A-Za-z0-9_\\-]{20,50}(?!\\w)', re.UNICODE),
    ('GitLab Token', 'GR1348941[A-Za-z0-9_\\-]{20,50}(?!\\w)', re.UNICODE),
    ('GitLab Token', 'glcbt-([0-9a-fA-F]{2}_)?[A-Za-z0-9_\\-]{20,50}(?!\\w)', re.UNICODE),
    ('GitLab Token', 'glimt-[A-Za-z0-9_\\-]{25}(?!\\w)', re.UNICODE),
    ('GitLab Token', 'glptt-[A-Za-z0-9_\\-]{40}(?!\\w)', re.UNICODE),
    ('GitLab Token', 'glagent-[A-Za-z0-9_\\-]{50,1024}(?!\\w)', re.UNICODE),
    ('GitLab Token', 'gloas-[A-Za-z0-9_\\-]{64}(?!\\w)', re.UNICODE),
    ('IBM Cloud IAM Key', '(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:ibm(?:_|-|)cloud(?:_|-|)iam|cloud(?:_|-|)iam|ibm(?:_|-|)cloud|ibm(?:_|-|)iam|ibm|iam|cloud|)(?:_|-|)(?:api|)(?:_|-|)(?:key|pwd|password|pass|token)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([a-zA-Z0-9_\\-]{44}(?![a-zA-Z0-9_\\-]))(?:"|\\\'|)', re.IGNORECASE|re.UNICODE),
    ('IBM COS HMAC Credentials', '(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:(?:ibm)?[-_]?cos[-_]?(?:hmac)?|)(?:_|-|)(?:secret[-_]?(?:access)?[-_]?key)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([a-f0-9]{48}(?![a-f0-9]))(?:"|\\\'|)', re.IGNORECASE|re.UNICODE),
    ('JSON Web Token', 'eyJ[A-Za-z0-9-_=]+\\.[A-Za-z0-9-_=]+\\.?[A-Za-z0-9-_.+/=]*?', re.UNICODE),
    ('Mailchimp Access Key', '[0-9a-z]{32}-us[0-9]{1,2}', re.UNICODE),
    ('NPM tokens', '\\/\\/.+\\/:_authToken=\\s*((npm_.+)|([A-Fa-f0-9-]{36})).*', re.UNICODE),
    ('OpenAI Token', 'sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}', re.UNICODE),
    ('PyPI Token', 'pypi-AgEIcHlwaS5vcmc[A-Za-z0-9-_]{70,}', re.UNICODE),
    ('PyPI Token', 'pypi-AgENdGVzdC5weXBpLm9yZw[A-Za-z0-9-_]{70,}', re.UNICODE),
    ('SendGrid API Key', 'SG\\.[a-zA-Z0-9_-]{22}\\.[a-zA-Z0-9_-]{43}', re.UNICODE),
    ('Slack Token', 'xox(?:a|b|p|o|s|r)-(?:\\d+-)+[a-z0-9]+', re.IGNORECASE|re.UNICODE),
    ('Slack Token', 'https://hooks\\.slack\\.com/services/T[a-zA-Z0-9_]+/B[a-zA-Z0-9_]+/[a-zA-Z0-9_]+', re.IGNORECASE|re.UNICODE|re.VERBOSE),
    ('SoftLayer Credentials', '(?:(?<=\\W)|(?<=^))(?:\\[|)(?:"|\\\'|)(?:softlayer|sl)(?:_|-|)(?:api|)(?:_|-|)(?:key|pwd|password|pass|token)(?:"|\\\'|)(?:\\]|)(?: *)(?:=|:|:=|=>| +|::)(?: *)(?:"|\\\'|)([a-z0-9]{64})(?:"|\\\'|)', re.IGNORECASE|re.UNICODE),
    ('SoftLayer Credentials', '(?:http|https)://api.softlayer.com/soap/(?:v3|v3.1)/([a-z0-9]{64})', re.IGNORECASE|re.UNICODE),
    ('Square OAuth Secret', 'sq0csp-[0-9A-Za-z\\\\\\-_]{43}', re.UNICODE),
    ('Stripe Access Key', '(?:r|s)k_live_[0-9a-zA-Z]{24}', re.UNICODE),
    ('Telegram Bot Token', '\\d{8,10}:[0-9A-Za-z_-]{35}', re.UNICODE),
    ('Twilio API Key', 'AC[a-z0-9]{32}', re.UNICODE),
    ('Twilio API Key', 'SK[a-z0-9]{32}', re.UNICODE),
)

# The keyword plugin's `DENYLIST`: names that make an assignment secret.
KEYWORDS: tuple[str, ...] = (
    'api_?key',
    'auth_?key',
    'service_?key',
    'account_?key',
    'db_?key',
    'database_?key',
    'priv_?key',
    'private_?key',
    'client_?key',
    'db_?pass',
    'database_?pass',
    'key_?pass',
    'password',
    'passwd',
    'pwd',
    'secret',
    'contraseña',
    'contrasena',
)

# `Base64HighEntropyString`: the characters its Shannon entropy counts, and the limit
# above which a value is random-looking.
ENTROPY_CHARSET = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789+/\\-_='
ENTROPY_LIMIT = 4.5
