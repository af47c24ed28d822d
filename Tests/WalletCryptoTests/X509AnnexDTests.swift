import Foundation
import Testing
@testable import WalletCrypto

/// The ISO/IEC 18013-5:2021 Annex D certificates (copied from
/// /work/shared/vectors/mdoc/annex_d_issuer_auth.json and
/// annex_d_device_request_reader_auth.json).
enum AnnexDCertificates {
    static let iaca = X509TestSupport.bytes(fromHex: [
        "308201ce30820173a00302010202142ab4edd052b2582f4c6ad96186de70f4de5a3994300a06082a8648ce3d040302302331",
        "14301206035504030c0b75746f7069612069616361310b3009060355040613025553301e170d323031303031303030303030",
        "5a170d3239303932393030303030305a30233114301206035504030c0b75746f7069612069616361310b3009060355040613",
        "0255533059301306072a8648ce3d020106082a8648ce3d030107034200042c3e103dbc07b25c5a770aeedfa5d8bd15417e3e",
        "676142461a7875e3b4188a2221e6423599d1db19aaef66f923d394b61709549bcec2ea6ff60ec75268f2e094a38184308181",
        "301e0603551d120417301581136578616d706c65406578616d706c652e636f6d301c0603551d1f041530133011a00fa00d82",
        "0b6578616d706c652e636f6d301d0603551d0e0416041454fa2383a04c28e0d930792261c80c4881d2c00b300e0603551d0f",
        "0101ff04040302010630120603551d130101ff040830060101ff020100300a06082a8648ce3d0403020349003046022100ec",
        "897f0b8ae51028288955031f860069659b75989af7129fa609c24299a5c787022100d088d8741f5d05b360ef6e85023e90df",
        "1d31dd1e6701a88efe9a7103021f986c"
    ].joined())
    static let documentSigner = X509TestSupport.bytes(fromHex: [
        "308201ef30820195a00302010202143c4416eed784f3b413e48f56f075abfa6d87eb84300a06082a8648ce3d040302302331",
        "14301206035504030c0b75746f7069612069616361310b3009060355040613025553301e170d323031303031303030303030",
        "5a170d3231313030313030303030305a30213112301006035504030c0975746f706961206473310b30090603550406130255",
        "533059301306072a8648ce3d020106082a8648ce3d03010703420004ace7ab7340e5d9648c5a72a9a6f56745c7aad436a03a",
        "43efea77b5fa7b88f0197d57d8983e1b37d3a539f4d588365e38cbbf5b94d68c547b5bc8731dcd2f146ba381a83081a5301e",
        "0603551d120417301581136578616d706c65406578616d706c652e636f6d301c0603551d1f041530133011a00fa00d820b65",
        "78616d706c652e636f6d301d0603551d0e0416041414e29017a6c35621ffc7a686b7b72db06cd12351301f0603551d230418",
        "3016801454fa2383a04c28e0d930792261c80c4881d2c00b300e0603551d0f0101ff04040302078030150603551d250101ff",
        "040b3009060728818c5d050102300a06082a8648ce3d040302034800304502210097717ab9016740c8d7bcdaa494a62c053b",
        "bdecce1383c1aca72ad08dbc04cbb202203bad859c13a63c6d1ad67d814d43e2425caf90d422422c04a8ee0304c0d3a68d"
    ].joined())
    static let reader = X509TestSupport.bytes(fromHex: [
        "308201b330820158a00302010202147552715f6add323d4934a1ba175dc945755d8b50300a06082a8648ce3d040302301631",
        "14301206035504030c0b72656164657220726f6f74301e170d3230313030313030303030305a170d32333132333130303030",
        "30305a3011310f300d06035504030c067265616465723059301306072a8648ce3d020106082a8648ce3d03010703420004f8",
        "912ee0f912b6be683ba2fa0121b2630e601b2b628dff3b44f6394eaa9abdbcc2149d29d6ff1a3e091135177e5c3d9c57f3bf",
        "839761eed02c64dd82ae1d3bbfa38188308185301c0603551d1f041530133011a00fa00d820b6578616d706c652e636f6d30",
        "1d0603551d0e04160414f2dfc4acafc5f30b464fada20bfcd533af5e07f5301f0603551d23041830168014cfb7a881baea5f",
        "32b6fb91cc29590c50dfac416e300e0603551d0f0101ff04040302078030150603551d250101ff040b3009060728818c5d05",
        "0106300a06082a8648ce3d0403020349003046022100fb9ea3b686fd7ea2f0234858ff8328b4efef6a1ef71ec4aae4e30720",
        "6f9214930221009b94f0d739dfa84cca29efed529dd4838acfd8b6bee212dc6320c46feb839a35"
    ].joined())
    static let readerRoot = X509TestSupport.bytes(fromHex: [
        "3082019030820137a003020102021430d747795405d564b7ac48be6f364ae2c774f2fc300a06082a8648ce3d040302301631",
        "14301206035504030c0b72656164657220726f6f74301e170d3230313030313030303030305a170d32393039323930303030",
        "30305a30163114301206035504030c0b72656164657220726f6f743059301306072a8648ce3d020106082a8648ce3d030107",
        "034200043643293832e0a480de592df0708fe25b6b923f6397ab39a8b1b7444593adb89c77b7e9c28cf48d6d187b43c9bf7b",
        "9c2c5c5ef22f329e44e7a91b4745b7e2063aa3633061301c0603551d1f041530133011a00fa00d820b6578616d706c652e63",
        "6f6d301d0603551d0e04160414cfb7a881baea5f32b6fb91cc29590c50dfac416e300e0603551d0f0101ff04040302010630",
        "120603551d130101ff040830060101ff020100300a06082a8648ce3d0403020347003044022018ac84baf991a614fb25e762",
        "41857b7fd0579dfe8aed8ac7f130675490799930022077f46f00b4af3e014d253e0edcc9f146a75a6b1bdfe33e9fa72f30f0",
        "880d5237"
    ].joined())

    /// 2021-06-01T00:00:00Z: inside every Annex D validity window.
    static let validTime = Date(timeIntervalSince1970: 1_622_505_600)
}

@Suite("X.509 with the ISO 18013-5 Annex D certificates")
struct X509AnnexDTests {
    @Test("The IACA certificate parses with its subject, validity, CA constraints and key usage")
    func iaca() throws {
        let iaca = try X509Certificate(derEncoded: AnnexDCertificates.iaca)
        #expect(iaca.derEncoded == AnnexDCertificates.iaca)
        #expect(iaca.version == 3)
        #expect(iaca.subject.commonName == "utopia iaca")
        #expect(iaca.subject.country == "US")
        #expect(iaca.subject.rfc4514String == "C=US,CN=utopia iaca")
        #expect(iaca.issuer == iaca.subject)
        #expect(iaca.isSelfSigned)
        #expect(iaca.serialNumberHex == "2ab4edd052b2582f4c6ad96186de70f4de5a3994")
        #expect(iaca.notBefore == Date(timeIntervalSince1970: 1_601_510_400))  // 2020-10-01
        #expect(iaca.notAfter == Date(timeIntervalSince1970: 1_885_334_400))   // 2029-09-29
        #expect(iaca.basicConstraints == BasicConstraints(isCA: true, pathLength: 0))
        #expect(iaca.keyUsage == [.keyCertSign, .cRLSign])
        #expect(iaca.extendedKeyUsage.isEmpty)
        #expect(!iaca.hasExtendedKeyUsage)
        #expect(iaca.issuerAlternativeNames == [.email("example@example.com")])
        #expect(iaca.subjectKeyIdentifier.map(X509TestSupport.hex) == "54fa2383a04c28e0d930792261c80c4881d2c00b")
        #expect(iaca.authorityKeyIdentifier == nil)
        #expect(Set(iaca.criticalExtensionOIDs) == ["2.5.29.15", "2.5.29.19"])
        #expect(iaca.extensionOIDs == ["2.5.29.18", "2.5.29.31", "2.5.29.14", "2.5.29.15", "2.5.29.19"])
        #expect(iaca.signatureAlgorithmOID == "1.2.840.10045.4.3.2")
        #expect(iaca.signatureAlgorithmName == "ecdsa-with-SHA256")
        #expect(iaca.sha256FingerprintHex == "6bdac7eb36008bafe71f199e5da3cf498c35c16100d748ddb1044f6643c0f829")
    }

    @Test("The document signer certificate carries the mdoc DS extended key usage and the IACA's key identifier")
    func documentSigner() throws {
        let iaca = try X509Certificate(derEncoded: AnnexDCertificates.iaca)
        let ds = try X509Certificate(derEncoded: AnnexDCertificates.documentSigner)
        #expect(ds.subject.commonName == "utopia ds")
        #expect(ds.subject[.country] == "US")
        #expect(ds.issuer == iaca.subject)
        #expect(!ds.isSelfSigned)
        #expect(ds.notBefore == Date(timeIntervalSince1970: 1_601_510_400))  // 2020-10-01
        #expect(ds.notAfter == Date(timeIntervalSince1970: 1_633_046_400))   // 2021-10-01
        #expect(ds.isValid(at: AnnexDCertificates.validTime))
        #expect(!ds.isValid(at: Date(timeIntervalSince1970: 1_640_995_200)))
        #expect(ds.basicConstraints == nil)
        #expect(ds.keyUsage == .digitalSignature)
        #expect(ds.extendedKeyUsage == [ExtendedKeyUsageOID.mdocDocumentSigner])
        #expect(ds.criticalExtensionOIDs.contains("2.5.29.37"))
        #expect(ds.authorityKeyIdentifier == iaca.subjectKeyIdentifier)
        #expect(ds.subjectKeyIdentifier.map(X509TestSupport.hex) == "14e29017a6c35621ffc7a686b7b72db06cd12351")
        #expect(ds.sha256FingerprintHex == "b79798ebbc0cafb406683b60a75ad78df735bc3535e31151db0e2dfc4bb98d3b")
        #expect(ds.sha256Fingerprint == X509TestSupport.sha256(AnnexDCertificates.documentSigner))
    }

    @Test("The reader certificate carries the mdoc reader authentication extended key usage")
    func readerCertificate() throws {
        let root = try X509Certificate(derEncoded: AnnexDCertificates.readerRoot)
        let reader = try X509Certificate(derEncoded: AnnexDCertificates.reader)
        #expect(reader.subject.rfc4514String == "CN=reader")
        #expect(reader.issuer.rfc4514String == "CN=reader root")
        #expect(reader.extendedKeyUsage == [ExtendedKeyUsageOID.mdocReaderAuthentication])
        #expect(reader.keyUsage == .digitalSignature)
        #expect(reader.authorityKeyIdentifier == root.subjectKeyIdentifier)
        #expect(reader.notAfter == Date(timeIntervalSince1970: 1_703_980_800))  // 2023-12-31
        #expect(root.isSelfSigned)
        #expect(root.basicConstraints == BasicConstraints(isCA: true, pathLength: 0))
    }

    @Test("The certified keys are P-256 SubjectPublicKeyInfos")
    func publicKeys() throws {
        for der in [AnnexDCertificates.iaca, AnnexDCertificates.documentSigner, AnnexDCertificates.reader, AnnexDCertificates.readerRoot] {
            let certificate = try X509Certificate(derEncoded: der)
            // SEQUENCE { SEQUENCE { id-ecPublicKey, prime256v1 }, BIT STRING (65-byte point) }
            let prefix = X509TestSupport.bytes(fromHex: "3059301306072a8648ce3d020106082a8648ce3d030107034200")
            #expect(Array(certificate.subjectPublicKeyInfoDER.prefix(prefix.count)) == prefix)
            #expect(certificate.subjectPublicKeyInfoDER.count == 91)
            #expect(X509TestSupport.isP256(try certificate.publicKey))
        }
    }

    @Test("The IACA to document signer chain validates inside both validity windows")
    func issuerChainValidates() throws {
        let iaca = try X509Certificate(derEncoded: AnnexDCertificates.iaca)
        let ds = try X509Certificate(derEncoded: AnnexDCertificates.documentSigner)
        let path = try validatePath(leaf: ds, anchors: [iaca], at: AnnexDCertificates.validTime)
        #expect(path == [ds, iaca])
    }

    @Test("The IACA chain fails as expired at depth 0 once the document signer has expired, and before its start")
    func issuerChainExpires() throws {
        let iaca = try X509Certificate(derEncoded: AnnexDCertificates.iaca)
        let ds = try X509Certificate(derEncoded: AnnexDCertificates.documentSigner)
        #expect(throws: TrustFailure.expired(depth: 0)) {
            try validatePath(leaf: ds, anchors: [iaca], at: Date(timeIntervalSince1970: 1_640_995_200))
        }
        // Before both windows: OpenSSL checks validity top-down, so the IACA (depth 1) is reported.
        #expect(throws: TrustFailure.notYetValid(depth: 1)) {
            try validatePath(leaf: ds, anchors: [iaca], at: Date(timeIntervalSince1970: 1_577_836_800))
        }
    }

    @Test("The reader chain validates in 2021 and fails as expired in 2024")
    func readerChain() throws {
        let root = try X509Certificate(derEncoded: AnnexDCertificates.readerRoot)
        let reader = try X509Certificate(derEncoded: AnnexDCertificates.reader)
        let validator = X509ChainValidator(anchors: [root])
        #expect(try validator.validate(chain: [reader], at: AnnexDCertificates.validTime, policy: .mdocReaderAuthentication).path == [reader, root])
        #expect(throws: TrustFailure.expired(depth: 0)) {
            try validator.validate(chain: [reader], at: Date(timeIntervalSince1970: 1_717_200_000), policy: .mdocReaderAuthentication)
        }
    }

    @Test("The reader certificate does not chain to the IACA, nor the document signer to the reader root")
    func crossedAnchorsAreUnknown() throws {
        let iaca = try X509Certificate(derEncoded: AnnexDCertificates.iaca)
        let ds = try X509Certificate(derEncoded: AnnexDCertificates.documentSigner)
        let root = try X509Certificate(derEncoded: AnnexDCertificates.readerRoot)
        let reader = try X509Certificate(derEncoded: AnnexDCertificates.reader)
        #expect(throws: TrustFailure.unknownAnchor) {
            try validatePath(leaf: reader, anchors: [iaca], at: AnnexDCertificates.validTime)
        }
        #expect(throws: TrustFailure.unknownAnchor) {
            try validatePath(leaf: ds, anchors: [root], at: AnnexDCertificates.validTime)
        }
    }

    @Test("A trusted document signer is its own anchor with partial chains, and needs its root without them")
    func partialChain() throws {
        let ds = try X509Certificate(derEncoded: AnnexDCertificates.documentSigner)
        #expect(try validatePath(leaf: ds, anchors: [ds], at: AnnexDCertificates.validTime) == [ds])
        #expect(throws: TrustFailure.unknownAnchor) {
            try validatePath(leaf: ds, anchors: [ds], at: AnnexDCertificates.validTime,
                                              options: .init(allowPartialChain: false))
        }
    }
}
