"""ISO 18013-5 test PKI for the mdoc interop scripts, built with pyca/cryptography
(independent of the SDK's own certificate builder)."""
import datetime

from cryptography import x509
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID, ObjectIdentifier

# ISO/IEC 18013-5 Annex B: the mdoc document signer extended key usage.
MDOC_DS_EKU = ObjectIdentifier("1.0.18013.5.1.2")


def make_pki(label):
    """An IACA root and a document signer certificate (names prefixed with `label`),
    built with pyca/cryptography to the Annex B profiles; returns (iaca, ds, ds_key)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    iaca_key = ec.generate_private_key(ec.SECP256R1())
    ds_key = ec.generate_private_key(ec.SECP256R1())
    iaca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{label} IACA"), x509.NameAttribute(NameOID.COUNTRY_NAME, "UT")])
    ds_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"{label} DS"), x509.NameAttribute(NameOID.COUNTRY_NAME, "UT")])
    iaca = (x509.CertificateBuilder().subject_name(iaca_name).issuer_name(iaca_name).public_key(iaca_key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=3650))
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True)
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(iaca_key.public_key()), critical=False)
            .sign(iaca_key, hashes.SHA256()))
    ds = (x509.CertificateBuilder().subject_name(ds_name).issuer_name(iaca_name).public_key(ds_key.public_key())
          .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(days=1))
          .not_valid_after(now + datetime.timedelta(days=365))
          .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
          .add_extension(x509.ExtendedKeyUsage([MDOC_DS_EKU]), critical=True)
          .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(iaca_key.public_key()), critical=False)
          .sign(iaca_key, hashes.SHA256()))
    return iaca, ds, ds_key
