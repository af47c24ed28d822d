import Foundation

/// Why a certificate, or the chain it came with, is not trusted for the use asked of it.
///
/// Every trust decision of the SDK fails with this one type: COSE `x5chain`, JOSE `x5c`,
/// SD-JWT VC issuers, mdoc issuer and reader authentication, key attestations. A module
/// wraps it in its own error enum (`COSEError.untrusted`, `MdocError.untrustedIssuer` ...)
/// and never turns it into text.
///
/// `depth` counts up from the leaf: 0 is the end-entity certificate that signed the data,
/// the anchor is the last certificate of the path.
public enum TrustFailure: Error, Hashable, Sendable {
    // MARK: What was presented

    /// No certificate was presented where one is needed (no or an empty `x5c` / `x5chain`).
    case missingCertificate
    /// A presented certificate is not one DER-encoded X.509 certificate; `index` is its
    /// position in the presented chain (0 is the leaf).
    case malformedCertificate(index: Int)
    /// No trust anchors are configured, so nothing can be trusted.
    case noTrustAnchors
    /// The leaf certifies a key of a type this SDK cannot verify with (e.g. RSA).
    case unsupportedLeafKey

    // MARK: Path validation (RFC 5280 §6)

    /// No path leads from the leaf to a configured anchor.
    case unknownAnchor
    /// A certificate's notAfter lies before the validation time.
    case expired(depth: Int)
    /// A certificate's notBefore lies after the validation time.
    case notYetValid(depth: Int)
    /// A certificate's signature does not verify with its issuer's key.
    case badSignature(depth: Int)
    /// A certificate that issues another is not a CA (basicConstraints cA absent or false).
    case issuerNotCA(depth: Int)
    /// A certificate that issues another lacks the keyCertSign key usage.
    case issuerCannotSignCertificates(depth: Int)
    /// The path is longer than a pathLenConstraint or the configured maximum allows.
    case pathTooLong(depth: Int)
    /// A certificate is outside a name constraint of a CA above it.
    case nameConstraintViolation(depth: Int)
    /// A certificate marks critical an extension the validator does not process.
    case unhandledCriticalExtension(depth: Int)
    /// A certificate breaks the RFC 5280 profile (malformed extension or validity field,
    /// missing key identifiers, explicit EC parameters, a CA without keyUsage ...).
    case nonConformingCertificate(depth: Int)
    /// A certificate's key or signature is weaker than the validator accepts (OpenSSL
    /// security level 2: an RSA or DSA key under 2048 bits, an EC key under 224 bits, a
    /// signature over SHA-1 or MD5).
    case weakCryptography(depth: Int)
    /// The path was rejected for another reason.
    case pathRejected(depth: Int)
    /// The validator itself could not run (the crypto library failed, e.g. out of memory).
    case validatorUnavailable

    // MARK: Policy (what the certificate may be used for)

    /// The certificate lacks an extended key usage the policy requires (an absent
    /// extendedKeyUsage extension lacks every purpose).
    case missingExtendedKeyUsage(required: String, depth: Int)
    /// The certificate's keyUsage is absent or lacks a bit the policy requires.
    case missingKeyUsage(required: KeyUsage, depth: Int)
    /// The leaf is a CA certificate, but the use needs an end-entity certificate.
    case leafIsCA
    /// A CA certificate does not constrain the path length as its profile requires
    /// (an ISO 18013-5 IACA carries pathLenConstraint 0); `maximum` is the allowed value.
    case pathLengthNotConstrained(depth: Int, maximum: Int)
    /// The certificate was not valid at a time the data claims for itself (such as the
    /// `signed` time of an mdoc MSO), although it may be valid now.
    case notValidAt(time: Date, depth: Int)
    /// No subjectAltName entry of the leaf names the identifier the data claims
    /// (the SD-JWT VC `iss`, the OpenID4VP `x509_san_dns` client identifier).
    case subjectAlternativeNameMismatch(expected: String)
    /// The SHA-256 hash of the leaf is not the one the identifier names (OpenID4VP `x509_hash`).
    case certificateHashMismatch

    // MARK: The signed data

    /// The chain is trusted but the data's signature does not verify with the leaf's key
    /// (an OpenID4VP request object signed by someone other than the certificate's holder).
    case signatureInvalid
}
