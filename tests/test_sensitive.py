from pathlib import Path, PurePosixPath

import pytest

from kenning.ingest.sensitive import is_sensitive_path


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path))
    return Path.home()


@pytest.mark.parametrize(
    "rel",
    [
        ".ssh/id_ed25519",
        ".ssh/config",
        ".ssh/notes.md",
        ".gnupg/pubring.kbx",
        ".aws/credentials",
        ".aws/config",
        ".azure/accessTokens.json",
        ".kube/config",
        ".docker/config.json",
        ".netrc",
        ".pgpass",
        ".git-credentials",
        ".config/gcloud/application_default_credentials.json",
        ".password-store/email.gpg",
        "Library/Keychains/login.keychain-db",
        ".mozilla/firefox/abc.default/logins.json",
        ".config/google-chrome/Default/Cookies",
        ".config/chromium/Default/Login Data",
        ".config/BraveSoftware/Brave-Browser/Default/History",
        "Library/Application Support/Google/Chrome/Default/Cookies",
        "Library/Application Support/Firefox/Profiles/x.default/key4.db",
    ],
)
def test_home_secrets(home: Path, rel: str) -> None:
    assert is_sensitive_path(home / rel)


@pytest.mark.parametrize(
    "name",
    [
        "id_rsa",
        "id_dsa",
        "id_ecdsa",
        "id_ed25519",
        "id_rsa_work",
        "id_ed25519.pub",
        "server.pem",
        "tls.key",
        "cert.p12",
        "cert.pfx",
        "vault.kdbx",
        "old.keychain",
        ".env",
        ".env.local",
        ".env.production",
        "credentials",
        "credentials.json",
        ".npmrc",
        ".pypirc",
        "secrets.yaml",
        "secrets.yml",
        "secrets.json",
    ],
)
def test_secret_names_anywhere(name: str) -> None:
    assert is_sensitive_path(Path("/srv/projects/app") / name)
    assert is_sensitive_path(PurePosixPath("notes/deep") / name)


@pytest.mark.parametrize(
    "path",
    [
        "/backup/home/alice/netrc",
        "/mnt/win/Users/alice/_netrc",
        "/srv/build/docker/config.json",
        "/backup/home/alice/kube/config",
        "/backup/home/alice/aws/config",
        "/backup/home/alice/aws/credentials",
        "/backup/home/alice/git-credentials",
        "/backup/home/alice/pgpass",
        "/mnt/win/Users/alice/AppData/Roaming/postgresql/pgpass.conf",
        "/usr/local/etc/npmrc",
        "/backup/home/alice/pypirc",
        "/srv/cluster/kubeconfig",
        "/srv/cluster/kubeconfig.yaml",
        "/mnt/win/Users/alice/AppData/Roaming/gcloud/credentials.db",
        "/mnt/win/Users/alice/AppData/Roaming/gcloud/access_tokens.db",
        "/backup/gcloud/application_default_credentials.json",
        "/mnt/win/Users/alice/.azure/accessTokens.json",
        "/backup/azure/accessTokens.json",
    ],
)
def test_credential_files_without_a_leading_dot(path: str) -> None:
    assert is_sensitive_path(Path(path))


@pytest.mark.parametrize(
    "path",
    [
        "/srv/app/docker/compose.yaml",
        "/srv/app/docker/Dockerfile",
        "/srv/app/kube/deployment.yaml",
        "/srv/app/aws/lambda.py",
        "/home/u/notes/netrc.md",
        "/home/u/notes/kubeconfig-howto.md",
        "/home/u/project/config",
        "/home/u/project/config.json",
    ],
)
def test_neighbours_of_dotless_credential_files_are_readable(path: str) -> None:
    assert not is_sensitive_path(Path(path))


@pytest.mark.parametrize("name", [".env.example", ".env.sample", ".env.template"])
def test_env_templates_are_readable(name: str) -> None:
    assert not is_sensitive_path(Path("/srv/app") / name)


@pytest.mark.parametrize(
    "path",
    [
        "/data/notes/.ssh/known_hosts",
        "/backup/olduser/.gnupg/secring.gpg",
        "/mnt/old-mac/Users/x/Library/Keychains/login.keychain",
        "relative/.aws/config",
    ],
)
def test_directory_rules_match_at_any_depth(path: str) -> None:
    assert is_sensitive_path(Path(path))


@pytest.mark.parametrize(
    "path",
    ["/home/u/.SSH/config", "/home/u/ID_RSA", "/home/u/Server.PEM", "/u/LIBRARY/keychains/x", "/a/.Env"],
)
def test_case_insensitive(path: str) -> None:
    assert is_sensitive_path(Path(path))


@pytest.mark.parametrize(
    "path",
    [
        "/home/u/notes/ssh-setup.md",
        "/home/u/credentials/how-we-rotate.md",  # a directory named like a secret file
        "/home/u/.docker/daemon.json",
        "/home/u/.config/nvim/init.lua",
        "/home/u/Library/Application Support/Notes/x.md",
        "/home/u/keys.md",
        "/home/u/secrets.md",
        "/home/u/environment.md",
        "/home/u/id.md",
        "/",
        "",
    ],
)
def test_ordinary_paths(path: str) -> None:
    assert not is_sensitive_path(Path(path))


def test_home_itself_is_not_sensitive(home: Path) -> None:
    assert not is_sensitive_path(home)
    assert not is_sensitive_path(home / "notes" / "todo.md")
