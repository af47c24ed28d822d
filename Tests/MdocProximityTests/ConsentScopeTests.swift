import Foundation
import Mdoc
@testable import MdocProximity
import Testing
import WalletCrypto

/// What a consent selection lets leave: a document only when an element it releases is
/// one the request asks for; otherwise a DocumentError, never an empty document (which
/// would still show the credential's issuerAuth and a fresh device signature).
@Suite("Consent scope of a proximity response")
struct ConsentScopeTests {
    static let pid = "eu.europa.ec.eudi.pid.1"
    static let request = DeviceRequest(docRequests: [
        DocRequest(itemsRequest: SessionFixtures.request(["age_over_18"])),
        DocRequest(itemsRequest: ItemsRequest(docType: pid, nameSpaces: [NameSpaced(pid, [RequestedElement("family_name", false)])])),
    ])

    @Test("byDocType keeps a docType only for a released element its requests ask for")
    func byDocType() {
        let age = ReleasedElement(docType: SessionFixtures.mDL, nameSpace: SessionFixtures.nameSpace, identifier: "age_over_18")
        let notAsked = ReleasedElement(docType: SessionFixtures.mDL, nameSpace: SessionFixtures.nameSpace, identifier: "age_over_21")
        let otherDocType = ReleasedElement(docType: "org.example.other", nameSpace: "org.example", identifier: "x")
        #expect(ConsentSelection(elements: [age]).byDocType(for: Self.request) == [SessionFixtures.mDL: [SessionFixtures.nameSpace: ["age_over_18"]]])
        #expect(ConsentSelection.nothing.byDocType(for: Self.request).isEmpty)
        #expect(ConsentSelection(elements: [notAsked, otherDocType]).byDocType(for: Self.request).isEmpty)
        #expect(ConsentSelection.everythingRequested(by: Self.request).byDocType(for: Self.request)
                == [SessionFixtures.mDL: [SessionFixtures.nameSpace: ["age_over_18"]], Self.pid: [Self.pid: ["family_name"]]])
    }

    @Test("a request of many elements, asked twice: the selection and the answer stay exact (and linear in the request)")
    func manyElements() async throws {
        let fixtures = try await SessionFixtures.make()
        let transcript = SessionTranscript(deviceEngagementEncoded: nil, eReaderKeyEncoded: nil, handover: .qr)
        let signer = SoftwareSigner(fixtures.deviceKey)
        // 30,000 identifiers, two of which the credential holds; the same ItemsRequest twice.
        let identifiers = (0..<29_998).map { "absent_\($0)" } + ["family_name", "age_over_18"]
        let items = SessionFixtures.request(identifiers)
        let request = DeviceRequest(docRequests: [DocRequest(itemsRequest: items), DocRequest(itemsRequest: items)])
        let everything = ConsentSelection.everythingRequested(by: request)
        #expect(everything.elements.count == identifiers.count)
        let released = everything.byDocType(for: request)
        #expect(released == [SessionFixtures.mDL: [SessionFixtures.nameSpace: Set(identifiers)]])
        let age = ReleasedElement(docType: SessionFixtures.mDL, nameSpace: SessionFixtures.nameSpace, identifier: "age_over_18")
        let notAsked = ReleasedElement(docType: SessionFixtures.mDL, nameSpace: SessionFixtures.nameSpace, identifier: "portrait")
        #expect(ConsentSelection(elements: [age, notAsked]).byDocType(for: request)
                == [SessionFixtures.mDL: [SessionFixtures.nameSpace: ["age_over_18"]]])
        let response = try await DeviceResponseBuilder.respond(
            to: request, with: [fixtures.credential], sessionTranscript: transcript, consented: released,
            authentication: { _ in .signature(signer) })
        #expect(response.documents.count == 2)
        for document in response.documents {
            let sent = document.issuerSigned.items(in: SessionFixtures.nameSpace).map(\.item.elementIdentifier)
            #expect(sent == ["family_name", "age_over_18"])
            #expect(document.errors.first?.elements.count == 29_998)
        }
    }

    @Test("a requested document the consent releases nothing of is a DocumentError, not an empty document")
    func nothingReleasedIsNotSent() async throws {
        let fixtures = try await SessionFixtures.make()
        let transcript = SessionTranscript(deviceEngagementEncoded: nil, eReaderKeyEncoded: nil, handover: .qr)
        let signer = SoftwareSigner(fixtures.deviceKey)
        let notAsked = ReleasedElement(docType: SessionFixtures.mDL, nameSpace: SessionFixtures.nameSpace, identifier: "family_name")
        for consent in [ConsentSelection.nothing, ConsentSelection(elements: [notAsked])] {
            let response = try await DeviceResponseBuilder.respond(
                to: Self.request, with: [fixtures.credential], sessionTranscript: transcript, consented: consent.byDocType(for: Self.request),
                authentication: { _ in .signature(signer) })
            #expect(response.documents.isEmpty)
            #expect(Set(response.documentErrors.map(\.docType)) == [SessionFixtures.mDL, Self.pid])
        }
        let age = ReleasedElement(docType: SessionFixtures.mDL, nameSpace: SessionFixtures.nameSpace, identifier: "age_over_18")
        let response = try await DeviceResponseBuilder.respond(
            to: Self.request, with: [fixtures.credential], sessionTranscript: transcript,
            consented: ConsentSelection(elements: [age]).byDocType(for: Self.request), authentication: { _ in .signature(signer) })
        #expect(response.documents.map(\.docType) == [SessionFixtures.mDL])
        #expect(response.documentErrors.map(\.docType) == [Self.pid])
    }
}
