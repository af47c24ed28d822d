import MdocProximity
import OpenID4VCI
import WalletStorage

/// Why a facade call failed (the sessions' own states carry the protocol errors:
/// `IssuanceError`, `PresentationError`, `ProximityError`).
public enum WalletError: Error, Equatable, Sendable {
    /// The platform has no application-support folder; configure `.sqlite(at:)`.
    case noApplicationSupportFolder
    /// The storage folder could not be created or is not a folder.
    case storageFolderUnavailable(path: String)
    /// A DER certificate in `TrustConfig.readerAnchorsDer` or `PresentationConfig.readerAnchorsDer`
    /// does not parse; the value is its index in the two lists joined, the former first.
    case invalidReaderAnchor(index: Int)
    /// No stored credential can answer a proximity request for this docType.
    case noMatchingCredential(docType: String)
    /// The credential store or the secure area failed.
    case storage(StorageError)
    /// An issuance call failed (deleting a credential goes through the issuer's notification).
    case issuance(IssuanceError)
    /// A proximity call failed.
    case proximity(ProximityError)
}
