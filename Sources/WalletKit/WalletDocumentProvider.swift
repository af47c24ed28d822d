import Foundation
import Mdoc
import MdocProximity
import SDJWT
import WalletCrypto
import WalletRuntime
import WalletStorage

/// The answer to one proximity request from the wallet's store: the mdocs of the
/// requested docTypes, one instance of each spent (a `.oneTime` instance is used once
/// and its key deleted), and exactly the elements the user chose.
///
/// Made by ``Wallet/documentProvider(for:consent:credentials:)`` once the user decided:
/// ```swift
/// let provider = try await wallet.documentProvider(for: request, consent: ConsentSelection(elements: chosen))
/// let response = try await transfer.createResponse(deviceRequest: request, documentProvider: provider)
/// try await transfer.sendDeviceResponse(response)
/// ```
/// There is no "release everything" default: an element the selection does not name is
/// reported to the reader as not returned.
public struct WalletDocumentProvider: MdocDocumentProvider {
    /// One document of the answer with the key of the instance spent for it.
    struct Document: Sendable {
        let credentialId: CredentialId
        let issuerSigned: IssuerSigned
        let signer: any Signer
    }

    /// The user's selection.
    public let selection: ConsentSelection
    private let first: Document
    private let others: [Document]

    init(selection: ConsentSelection, first: Document, others: [Document]) {
        self.selection = selection
        self.first = first
        self.others = others
    }

    /// The ids of the credentials this answer presents.
    public var credentialIds: [CredentialId] { ([first] + others).map(\.credentialId) }

    /// The prepared documents.
    public func credentials(for request: DeviceRequest) async throws(DocumentProviderError) -> [IssuerSigned] {
        ([first] + others).map(\.issuerSigned)
    }

    /// A device signature by the key of the instance spent for `credential`.
    public func authentication(for credential: IssuerSigned) -> DeviceAuthenticationMethod {
        let document = others.first { $0.issuerSigned == credential } ?? first
        return .signature(document.signer)
    }

    /// The user's selection, as given.
    public func consent(for request: DeviceRequest) async throws(DocumentProviderError) -> ConsentSelection { selection }
}

extension Wallet {
    /// Prepares the answer to a proximity `request` with the elements of `consent`: for
    /// each requested docType the selection releases something of, the credential named
    /// in `credentials` (by docType) or else the oldest one with an instance left, with
    /// one instance spent now. What leaves the wallet is logged when the session ends.
    /// - Throws: `.noMatchingCredential(docType:)` when no credential can answer a docType
    ///   the selection releases; `.storage` when the store or an unlock fails (a dismissed
    ///   prompt arrives as `.storage(.userCancelled)`).
    public func documentProvider(for request: DeviceRequest, consent: ConsentSelection,
                                 credentials chosen: [String: CredentialId] = [:]) async throws(WalletError) -> WalletDocumentProvider {
        // A docType is answered (and an instance spent) only when the consent releases
        // an element one of its requests asks for. Every docType's credentials are found
        // before any instance is spent, so that a docType nothing answers spends nothing.
        let released = consent.byDocType(for: request)
        var answered: [(docType: String, spaces: [String: Set<String>], candidates: [CredentialId])] = []
        var seen = Set<String>()
        for docRequest in request.docRequests {
            let docType = docRequest.itemsRequest.docType
            guard seen.insert(docType).inserted, let spaces = released[docType] else { continue }
            let candidates: [CredentialId]
            if let named = chosen[docType] {
                // The app's choice must be able to answer too, before anything is spent.
                guard ((try? await store.remainingInstances(of: named)) ?? 0) > 0 else {
                    throw .noMatchingCredential(docType: docType)
                }
                candidates = [named]
            } else {
                candidates = try await presentableMdocs(of: docType)
            }
            guard !candidates.isEmpty else { throw .noMatchingCredential(docType: docType) }
            answered.append((docType, spaces, candidates))
        }
        var documents: [WalletDocumentProvider.Document] = []
        var disclosed: [ProximityDisclosures.Document] = []
        for (docType, spaces, candidates) in answered {
            let (id, consumed) = try await consumeInstance(ofFirstOf: candidates, docType: docType,
                                                           named: chosen[docType] != nil)
            let issuerSigned: IssuerSigned
            do { issuerSigned = try IssuerSigned(encoded: consumed.instance.raw) } catch {
                throw .storage(.corruptRecord(table: "credential_instances", key: id))
            }
            documents.append(.init(credentialId: id, issuerSigned: issuerSigned, signer: consumed.signer))
            disclosed.append(.init(credentialId: id, docType: docType, raw: consumed.instance.raw,
                                   paths: Self.paths(of: spaces, presentIn: issuerSigned)))
        }
        guard let first = documents.first else {
            throw .noMatchingCredential(docType: request.docRequests.first?.itemsRequest.docType ?? "")
        }
        // Logged when the session sends its response; a session that ended meanwhile (the
        // reader left while an unlock prompt was up) sends none, and a registration kept
        // for it would be credited to a later session asking the same.
        if await isPending(request) { proximityDisclosures.register(disclosed, for: request) }
        await credentialMonitor.refresh()
        return WalletDocumentProvider(selection: consent, first: first, others: Array(documents.dropFirst()))
    }

    /// Whether a session of the wallet's proximity manager waits for the user's answer to
    /// `request`.
    private func isPending(_ request: DeviceRequest) async -> Bool {
        for engagement in await proximity.engagements {
            guard let transfer = engagement.transferManager, await transfer.phase == .awaitingConsent else { continue }
            if await transfer.deviceRequest?.encodedBytes == request.encodedBytes { return true }
        }
        return false
    }

    /// The issued mdocs of `docType` with an instance left, oldest first.
    private func presentableMdocs(of docType: String) async throws(WalletError) -> [CredentialId] {
        let candidates: [StoredCredential]
        do { candidates = try await store.list(CredentialFilter(format: .msoMdoc, type: docType)) } catch { throw .storage(error) }
        var presentable: [CredentialId] = []
        for candidate in candidates where candidate.state == .issued {
            if ((try? await store.remainingInstances(of: candidate.id)) ?? 0) > 0 { presentable.append(candidate.id) }
        }
        return presentable
    }

    /// One instance of the first of `candidates` that still has one. A credential the app
    /// `named` is the only candidate and its failure is the answer; among those the wallet
    /// chose, one whose last instance was spent or that was deleted since it was listed
    /// (another session, a renewal) gives way to the next.
    private func consumeInstance(ofFirstOf candidates: [CredentialId], docType: String,
                                 named: Bool) async throws(WalletError) -> (CredentialId, ConsumedInstance) {
        for id in candidates {
            do {
                return (id, try await store.consumeInstance(of: id, unlock: await unlock?(id)))
            } catch .noInstancesLeft where !named, .credentialNotFound where !named {
                continue
            } catch {
                throw .storage(error)
            }
        }
        throw .noMatchingCredential(docType: docType)
    }

    /// The `[namespace, element]` paths that leave the wallet: of `spaces` (the elements
    /// of one docType both selected and requested, by namespace), those `document` holds.
    static func paths(of spaces: [String: Set<String>], presentIn document: IssuerSigned) -> [ClaimPath] {
        var paths: [ClaimPath] = []
        for (nameSpace, identifiers) in spaces {
            let present = Set(document.items(in: nameSpace).map(\.item.elementIdentifier))
            for identifier in identifiers where present.contains(identifier) {
                paths.append(ClaimPath([.key(nameSpace), .key(identifier)]))
            }
        }
        return paths.sorted { $0.description < $1.description }
    }
}
