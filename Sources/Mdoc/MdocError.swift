import CBOR
import COSE
import Foundation
import WalletCrypto

/// The one error type of the `Mdoc` module: every failure to parse, build, encrypt,
/// decrypt, sign or verify an ISO/IEC 18013-5 structure is one of these cases.
///
/// Where the standard assigns a session status code (ISO 18013-5 §9.1.1.5, Table 20),
/// ``sessionStatus`` gives it, so a transport can answer the peer with `SessionData`.
public enum MdocError: Error, Equatable, Sendable {
    /// The bytes are not well-formed CBOR or exceed the decoder's limits (status 11).
    case cbor(CBORError)
    /// Well-formed CBOR without the shape the standard requires (status 11).
    case malformed(MdocMalformation)
    /// A `version` this implementation does not speak.
    case unsupportedVersion(String)
    /// A cipher suite other than 1 in DeviceEngagement or ReaderEngagement security.
    case unsupportedCipherSuite(Int)
    /// A COSE structure (key, Sign1, Mac0) failed to parse or build.
    case cose(COSEError)
    /// A cryptographic primitive failed (ECDH, HKDF, hashing, a signer).
    case crypto(CryptoError)
    /// The holder's or reader's `Signer` / `KeyAgreement` failed (a cancelled
    /// authentication prompt arrives here unchanged as `.keyOperation(.userCancelled)`).
    case keyOperation(KeyOperationError)
    /// A SessionData message did not decrypt: wrong key, tampered ciphertext or tag, or a
    /// message replayed or received out of order (its counter is not the next one) (status 10).
    case decryptionFailed(counter: UInt32)
    /// The message counter of a direction would wrap; the session must end (status 10).
    case counterExhausted
    /// The peer ended the session (SessionData status 20), or it was already ended.
    case sessionTerminated
    /// The peer reported an error status in SessionData (10 or 11), or a status Table 20
    /// does not define: any code other than 20, kept as received (a CBOR uint).
    case peerReportedError(status: UInt64)
    /// The DeviceResponse reports a status other than OK (ISO 18013-5 §8.3.2.1.2.3); the
    /// document errors it carried are kept. Nothing in it is verified.
    case responseStatusNotOK(status: DeviceResponse.Status, documentErrors: [DocumentError])
    /// The DeviceResponse has status OK but returns no document; the document errors it
    /// carried say why. An empty response is not a verified one.
    case noDocumentsReturned(documentErrors: [DocumentError])
    /// The issuer signature over the MSO does not verify.
    case issuerSignatureInvalid(COSEError)
    /// The issuerAuth certificate chain does not lead to a trusted IACA anchor, or is not
    /// a document signer certificate valid when the MSO was signed.
    case untrustedIssuer(TrustFailure)
    /// The MSO names a digest algorithm other than SHA-256/384/512.
    case unsupportedDigestAlgorithm(String)
    /// An element's IssuerSignedItemBytes do not hash to the MSO's digest for its digestID.
    case digestMismatch(nameSpace: String, elementIdentifier: String, digestID: UInt64)
    /// An element's digestID (or its namespace) is not in the MSO's valueDigests.
    case unknownDigestID(nameSpace: String, digestID: UInt64)
    /// The same digestID appears twice in one namespace of a document.
    case duplicateDigestID(nameSpace: String, digestID: UInt64)
    /// The MSO's validUntil is before the verification time.
    case msoExpired(validUntil: Date, at: Date)
    /// The MSO's validFrom is after the verification time.
    case msoNotYetValid(validFrom: Date, at: Date)
    /// The docType of a document, its MSO or the request do not agree.
    case docTypeMismatch(expected: String, actual: String)
    /// The device signature or MAC does not verify over DeviceAuthenticationBytes.
    case deviceAuthenticationFailed(COSEError)
    /// DeviceAuth holds neither a deviceSignature nor a deviceMac, or both.
    case missingDeviceAuthentication
    /// deviceMac was used but no reader ephemeral key was given to derive EMacKey.
    case macKeyUnavailable
    /// The holder's signing or agreement key is not the MSO's deviceKey.
    case deviceKeyMismatch
    /// A DeviceSigned element that the MSO's keyAuthorizations do not cover.
    case notAuthorizedByKeyAuthorizations(nameSpace: String, elementIdentifier: String)
    /// The reader authentication signature does not verify over ReaderAuthenticationBytes.
    case readerAuthenticationFailed(COSEError)
    /// The reader certificate chain does not lead to a trusted reader anchor, or is not a
    /// reader authentication certificate.
    case untrustedReader(TrustFailure)
    /// A DocRequest has no readerAuth where one was required.
    case readerAuthenticationMissing
    /// An `mdoc:` URI that does not carry base64url DeviceEngagement bytes.
    case invalidEngagementURI

    /// The SessionData status code the standard gives for this failure (ISO 18013-5
    /// §9.1.1.5): 10 session encryption error, 11 CBOR decoding error, 20 session
    /// termination; nil when the standard gives none.
    public var sessionStatus: SessionData.Status? {
        switch self {
        case .decryptionFailed, .counterExhausted: .sessionEncryptionError
        case .cbor, .malformed: .cborDecodingError
        case .sessionTerminated: .sessionTermination
        default: nil
        }
    }
}

/// Where and how a structure departs from the shape ISO 18013-5 gives it
/// (``MdocError/malformed(_:)``).
public struct MdocMalformation: Hashable, Sendable {
    /// The CBOR type a member should have had.
    public enum ExpectedType: Hashable, Sendable {
        /// A map.
        case map
        /// An array.
        case array
        /// A text string.
        case textString
        /// A byte string.
        case byteString
        /// An unsigned integer.
        case unsignedInteger
        /// An integer.
        case integer
        /// A boolean.
        case boolean
        /// A `tdate` (tag 0 text, or tag 1 number when reading).
        case date
        /// A `#6.24(bstr .cbor X)` embedded CBOR item.
        case embeddedCBOR
    }

    /// What is wrong at ``location``.
    public enum Problem: Hashable, Sendable {
        /// A required member is absent (named by its key or label).
        case missingMember(String)
        /// The value has another CBOR type than the standard gives it.
        case wrongType(expected: ExpectedType)
        /// An array has another number of elements than the standard gives it.
        case wrongElementCount(expected: Int, actual: Int)
        /// An array holds more elements than this implementation accepts (`limit`), a
        /// bound the standard leaves open and that keeps a peer from making the work
        /// after decoding (signature checks, consent, the answer) grow without limit.
        case tooManyElements(limit: Int)
        /// The members are present with the right types but break a rule of the standard
        /// (a SessionData with neither data nor status, an NFC option without its keys).
        case ruleViolated
    }

    /// The structure or member at fault, named as in ISO 18013-5 (`IssuerSignedItem`,
    /// `validityInfo signed`, `SessionTranscript`).
    public let location: String
    /// What is wrong there.
    public let problem: Problem

    /// A malformation of `location`.
    public init(_ location: String, _ problem: Problem) {
        self.location = location
        self.problem = problem
    }
}

extension MdocError {
    /// `malformed` at `location` with `problem`.
    static func malformed(_ location: String, _ problem: MdocMalformation.Problem) -> MdocError {
        .malformed(MdocMalformation(location, problem))
    }
}
