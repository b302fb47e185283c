"""Kubeconfig loading with client-go's clientcmd rules: merge order, contexts, paths, validation,
the load order of controller-runtime's GetConfig, and in-cluster configuration."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from pyscaffold_op.runtime import ConfigError, in_cluster_config, load_config
from pyscaffold_op.runtime.client.credentials import TokenFile, credentials_for

from .kubeconfig_helpers import write_kubeconfig

SERVER = "https://10.0.0.1:6443"


@pytest.fixture
def clean_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path


def test_kubeconfig_list_merges_first_wins(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = clean_env / "a" / "config"
    first.parent.mkdir()
    # no current-context here: the second file's wins; its cluster "c" wins over the second's
    first.write_text(
        "clusters:\n- name: c\n  cluster: {server: 'https://first:6443'}\n"
        "users:\n- name: u\n  user: {token: from-first}\n"
    )
    second = clean_env / "b" / "config"
    second.parent.mkdir()
    second.write_text(
        "current-context: dev\n"
        "clusters:\n- name: c\n  cluster: {server: 'https://second:6443', tls-server-name: ignored}\n"
        "users:\n- name: u\n  user: {token: from-second}\n"
        "contexts:\n- name: dev\n  context: {cluster: c, user: u, namespace: team}\n"
        "- name: other\n  context: {cluster: c, user: u}\n"
    )
    third = clean_env / "c" / "config"
    third.parent.mkdir()
    third.write_text("current-context: other\n")
    missing = clean_env / "missing"
    monkeypatch.setenv("KUBECONFIG", f"{missing}:{first}:{second}:{third}")
    cfg = load_config()
    # the whole entry of the first file wins: not even the second's extra field is merged in
    assert cfg.server == "https://first:6443" and cfg.tls_server_name is None
    assert cfg.token == "from-first"
    assert cfg.context_name == "dev" and cfg.namespace == "team"
    other = load_config(context="other")
    assert other.context_name == "other" and other.namespace == "default"
    with pytest.raises(ConfigError, match='context "nope" does not exist'):
        load_config(context="nope")


def test_load_order_follows_controller_runtime(clean_env: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = write_kubeconfig(clean_env / "home" / ".kube" / "config", {"server": "https://home:6443"})
    sa = clean_env / "sa"
    sa.mkdir()
    (sa / "token").write_text("sa-token\n")
    (sa / "namespace").write_text("operators\n")
    monkeypatch.setattr("pyscaffold_op.runtime.client.config.SERVICE_ACCOUNT_DIR", str(sa))
    assert load_config().server == "https://home:6443"  # not in a cluster: ~/.kube/config
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "10.96.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    cfg = load_config()  # in a pod, without KUBECONFIG: in-cluster before ~/.kube/config
    assert cfg.server == "https://10.96.0.1:443" and cfg.namespace == "operators"
    assert cfg.token_file == str(sa / "token") and cfg.ca_file is None
    # KUBECONFIG set: only its files, never in-cluster nor home
    monkeypatch.setenv("KUBECONFIG", str(clean_env / "nothing-here"))
    with pytest.raises(ConfigError, match="nothing-here"):
        load_config()
    # --kubeconfig: that file only, and it must exist
    assert load_config(home).server == "https://home:6443"
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(clean_env / "absent")


def test_in_cluster_ipv6_host_and_token_rotation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "fd00::1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", "443")
    (tmp_path / "token").write_text("one")
    (tmp_path / "ca.crt").write_text("not used here")
    cfg = in_cluster_config(tmp_path)
    assert cfg.server == "https://[fd00::1]:443" and cfg.ca_file == str(tmp_path / "ca.crt")
    assert cfg.namespace == "default"  # no namespace file
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT")
    with pytest.raises(ConfigError, match="KUBERNETES_SERVICE_PORT must be defined"):
        in_cluster_config(tmp_path)


async def test_token_file_is_reread_once_a_minute(tmp_path: Path) -> None:
    token = tmp_path / "token"
    token.write_text("one\n")
    now = [0.0]
    creds = TokenFile(str(token), monotonic=lambda: now[0])
    assert await creds.authorization() == "Bearer one"
    token.write_text("two")  # the kubelet rotated the bound token
    now[0] = 59.0
    assert await creds.authorization() == "Bearer one"  # cached for a minute, as client-go
    now[0] = 60.0
    assert await creds.authorization() == "Bearer two"
    token.unlink()  # mid-rotation: the last good token stays
    now[0] = 200.0
    assert await creds.authorization() == "Bearer two"


async def test_token_file_wins_over_token_once_read(tmp_path: Path) -> None:
    token = tmp_path / "t"
    token.write_text("from-file")
    kc = write_kubeconfig(tmp_path / "kc", {"server": SERVER}, {"token": "inline", "tokenFile": "t"})
    cfg = load_config(kc)
    assert cfg.token == "inline" and cfg.token_file == str(token)
    assert "inline" not in repr(cfg)  # secrets stay out of logs
    assert await credentials_for(cfg).authorization() == "Bearer from-file"


def test_relative_paths_resolve_against_the_defining_file(tmp_path: Path) -> None:
    folder = tmp_path / "conf"
    (folder / "pki").mkdir(parents=True)
    for name in ("ca.crt", "client.crt", "client.key"):
        (folder / "pki" / name).write_text("x")
    kc = write_kubeconfig(
        folder / "kubeconfig",
        {"server": SERVER, "certificate-authority": "pki/ca.crt"},
        {
            "client-certificate": "pki/client.crt",
            "client-key": "pki/client.key",
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": "./bin/get-token",
                "interactiveMode": "Never",
            },
        },
    )
    cfg = load_config(kc)
    assert cfg.ca_file == str(folder / "pki" / "ca.crt")
    assert cfg.cert_file == str(folder / "pki" / "client.crt")
    assert cfg.key_file == str(folder / "pki" / "client.key")
    assert cfg.exec is not None and cfg.exec.command == str(folder / "bin" / "get-token")
    path_based = write_kubeconfig(
        tmp_path / "kc2",
        {"server": SERVER},
        {"exec": {"apiVersion": "client.authentication.k8s.io/v1beta1", "command": "aws", "args": ["eks"]}},
    )
    plugin = load_config(path_based).exec
    assert plugin is not None and plugin.command == "aws"  # looked up on PATH, not resolved
    assert plugin.interactive_mode == "IfAvailable" and plugin.args == ("eks",)  # v1beta1's default


@pytest.mark.parametrize(
    ("cluster", "user", "message"),
    [
        ({"server": ""}, {}, 'no server found for cluster "c"'),
        (
            {"server": SERVER, "certificate-authority": "/x", "certificate-authority-data": "eA=="},
            {},
            "certificate-authority-data and certificate-authority are both specified",
        ),
        (
            {"server": SERVER, "insecure-skip-tls-verify": True, "certificate-authority-data": "eA=="},
            {},
            "insecure",
        ),
        ({"server": SERVER}, {"token": "t", "username": "a"}, "more than one authentication method"),
        ({"server": SERVER}, {"client-certificate-data": "eA=="}, "client-key-data or client-key must be"),
        (
            {"server": SERVER},
            {"client-certificate": "/nonexistent.crt", "client-key-data": "eA=="},
            "unable to read",
        ),
        ({"server": SERVER}, {"auth-provider": {"name": "oidc"}}, "exec credential plugin"),
        (
            {"server": SERVER},
            {"exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": "x"}},
            "interactiveMode must be specified",
        ),
        (
            {"server": SERVER},
            {"exec": {"apiVersion": "client.authentication.k8s.io/v1alpha1", "command": "x"}},
            "unsupported apiVersion",
        ),
        ({"server": SERVER, "proxy-url": "socks5://127.0.0.1:1080"}, {}, "only http:// and https:// proxies"),
        ({"server": SERVER, "certificate-authority-data": "not base64!"}, {}, "not valid base64"),
    ],
)
def test_clientcmd_validation(tmp_path: Path, cluster: dict, user: dict, message: str) -> None:
    kc = write_kubeconfig(tmp_path / "kc", cluster, user)
    with pytest.raises(ConfigError, match=message):
        load_config(kc)


def test_yaml_1_1_booleans_data_fields_and_a_missing_user(tmp_path: Path) -> None:
    ca = base64.b64encode(b"PEM").decode()
    kc = tmp_path / "kc"
    kc.write_text(
        "current-context: x\n"
        f"clusters:\n- name: c\n  cluster:\n    server: 10.0.0.1:6443\n    insecure-skip-tls-verify: yes\n"
        f"- name: d\n  cluster:\n    server: https://d\n    certificate-authority-data: {ca}\n"
        "contexts:\n- name: x\n  context: {cluster: c, user: ghost}\n"
        "- name: second\n  context: {cluster: d}\n"
    )
    cfg = load_config(kc)
    assert cfg.insecure is True  # go-yaml reads `yes` as true
    assert cfg.server == "https://10.0.0.1:6443"  # a bare host:port is https
    assert cfg.token is None and cfg.exec is None  # a user no file defines: anonymous, as in client-go
    assert load_config(kc, context="second").ca_data == b"PEM"
