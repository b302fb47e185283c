"""The self-signed serving certificate (controller-runtime's fallback for secure metrics) and the local
webhook CA, made with cryptography's builder, checked field by field: parsed and their signatures verified
by `cryptography`, and used by OpenSSL in real handshakes with hostname verification."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID

from pyscaffold_op.runtime.certs.certs import self_signed_cert, server_context
from pyscaffold_op.runtime.webhook import write_local_certs


def test_certificate_fields_and_signature() -> None:
    before = datetime.datetime.now(datetime.UTC)
    cert_pem, key_pem = self_signed_cert("metrics.local", ips=("127.0.0.1", "::1"))
    cert = x509.load_pem_x509_certificate(cert_pem)
    key = serialization.load_pem_private_key(key_pem, password=None)
    assert isinstance(key, ec.EllipticCurvePrivateKey) and key.curve.name == "secp256r1"
    assert key.public_key().public_numbers() == cert.public_key().public_numbers()  # type: ignore[union-attr]
    # self-signed: the issuer is the subject and the signature verifies with its own key
    assert cert.issuer == cert.subject
    assert cert.subject.rfc4514_string().startswith("CN=metrics.local@")
    assert cert.signature_hash_algorithm is not None and cert.signature_hash_algorithm.name == "sha256"
    cert.public_key().verify(cert.signature, cert.tbs_certificate_bytes, ec.ECDSA(hashes.SHA256()))  # type: ignore[call-arg, union-attr]
    assert cert.version == x509.Version.v3 and 0 < cert.serial_number < 2**159
    san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["metrics.local"]
    assert [str(ip) for ip in san.get_values_for_type(x509.IPAddress)] == ["127.0.0.1", "::1"]
    basic = cert.extensions.get_extension_for_class(x509.BasicConstraints)
    assert basic.critical and basic.value.ca is False
    usage = cert.extensions.get_extension_for_class(x509.KeyUsage)
    assert usage.critical and usage.value.digital_signature and not usage.value.key_cert_sign
    assert not usage.value.key_encipherment  # ECDSA: no key transport
    eku = cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert list(eku) == [ExtendedKeyUsageOID.SERVER_AUTH]
    after = datetime.datetime.now(datetime.UTC)
    start, end = cert.not_valid_before_utc, cert.not_valid_after_utc
    assert before - datetime.timedelta(minutes=6) <= start <= after - datetime.timedelta(minutes=4)
    assert end - start == datetime.timedelta(days=365, minutes=5)
    # two certificates never share a key or serial
    other = x509.load_pem_x509_certificate(self_signed_cert()[0])
    assert other.serial_number != cert.serial_number
    assert other.public_key().public_numbers() != cert.public_key().public_numbers()  # type: ignore[union-attr]


async def test_openssl_handshake_verifies_it_by_name_and_ip() -> None:
    ctx = server_context(None)  # the secure metrics default: a fresh self-signed certificate
    cert_pem = None

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hello")
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=ctx)
    port = server.sockets[0].getsockname()[1]
    try:
        # learn the certificate the server presents, then trust exactly it
        probe = ssl.create_default_context()
        probe.check_hostname, probe.verify_mode = False, ssl.CERT_NONE
        reader, writer = await asyncio.open_connection("127.0.0.1", port, ssl=probe)
        der = writer.get_extra_info("ssl_object").getpeercert(binary_form=True)
        assert writer.get_extra_info("ssl_object").version() in ("TLSv1.2", "TLSv1.3")
        await reader.read()
        writer.close()
        cert_pem = ssl.DER_cert_to_PEM_cert(der)
        for host, server_hostname in (("127.0.0.1", None), ("127.0.0.1", "localhost")):
            client = ssl.create_default_context(cadata=cert_pem)
            reader, writer = await asyncio.open_connection(
                host, port, ssl=client, server_hostname=server_hostname
            )
            assert await reader.read() == b"hello"
            writer.close()
        client = ssl.create_default_context(cadata=cert_pem)
        try:
            await asyncio.open_connection("127.0.0.1", port, ssl=client, server_hostname="elsewhere")
        except ssl.SSLCertVerificationError as err:
            assert "elsewhere" in str(err) or "Hostname mismatch" in str(err)
        else:
            raise AssertionError("a name the certificate does not carry was accepted")
    finally:
        server.close()
        await server.wait_closed()


def test_local_webhook_ca_and_leaf(tmp_path: Path) -> None:
    ca_pem = write_local_certs(tmp_path, hosts=("webhook.local", "localhost"), ips=("127.0.0.1",), days=30)
    ca = x509.load_pem_x509_certificate(ca_pem)
    leaf = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    key = serialization.load_pem_private_key((tmp_path / "tls.key").read_bytes(), password=None)
    assert (tmp_path / "tls.key").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "ca.crt").read_bytes() == ca_pem
    # the CA: self-signed, may sign leaves and nothing below them
    ca.verify_directly_issued_by(ca)
    constraints = ca.extensions.get_extension_for_class(x509.BasicConstraints)
    assert constraints.critical and constraints.value.ca and constraints.value.path_length == 0
    ca_usage = ca.extensions.get_extension_for_class(x509.KeyUsage).value
    assert ca_usage.key_cert_sign and ca_usage.crl_sign
    # the leaf: signed by the CA, for the key written beside it, serving the names asked for
    leaf.verify_directly_issued_by(ca)
    assert key.public_key().public_numbers() == leaf.public_key().public_numbers()  # type: ignore[union-attr]
    assert not leaf.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    san = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert san.get_values_for_type(x509.DNSName) == ["webhook.local", "localhost"]
    aki = leaf.extensions.get_extension_for_class(x509.AuthorityKeyIdentifier).value
    ski = ca.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
    assert (
        aki.key_identifier == ski.digest == x509.SubjectKeyIdentifier.from_public_key(ca.public_key()).digest
    )
    assert leaf.not_valid_after_utc - leaf.not_valid_before_utc == datetime.timedelta(days=30, minutes=5)
    # OpenSSL builds and checks the chain (hostname included) from the CA alone
    server = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server.load_cert_chain(tmp_path / "tls.crt", tmp_path / "tls.key")
    client = ssl.create_default_context(cadata=ca_pem.decode())
    for hostname, ok in (("webhook.local", True), ("other.local", False)):
        assert _handshake(server, client, hostname) is ok


def _handshake(server: ssl.SSLContext, client: ssl.SSLContext, hostname: str) -> bool:
    """A TLS handshake in memory (two BIO pairs); True when the client accepts the server."""
    s_in, s_out, c_in, c_out = ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO(), ssl.MemoryBIO()
    srv = server.wrap_bio(s_in, s_out, server_side=True)
    cli = client.wrap_bio(c_in, c_out, server_hostname=hostname)
    client_done = server_done = False
    for _ in range(10):
        try:
            cli.do_handshake()
            client_done = True
        except ssl.SSLWantReadError:
            pass
        except ssl.SSLCertVerificationError:
            return False
        s_in.write(c_out.read())
        try:
            srv.do_handshake()
            server_done = True
        except ssl.SSLWantReadError:
            pass
        c_in.write(s_out.read())
        if client_done and server_done:
            return True
    raise AssertionError("the handshake did not finish")


def test_cryptography_is_imported_only_when_a_certificate_is_made() -> None:
    """An operator that brings its own certificates (cert-manager) never pays cryptography's import."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "import pyscaffold_op.runtime as r\n"
        "r.Manager, r.Client, r.load_config, r.Request, r.Result\n"
        "import pyscaffold_op.runtime.webhook.server, pyscaffold_op.runtime.certs.certs as c\n"
        "import pyscaffold_op.runtime.servers.metrics\n"
        "print('cryptography' in sys.modules)\n"
        "c.server_context(None)\n"
        "print('cryptography' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "True"]
