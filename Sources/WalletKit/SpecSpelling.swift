import MdocProximity

// The proximity specification's Swift examples spell a few calls the Kotlin way
// (`createEngagement(type: .QR, config:)`, `.TO_APP`, `config.copy(readerEngagementUri:)`).
// These forward to the Swift-cased API so that code written from the specification
// compiles as it stands; new code uses the Swift names.

extension EngagementType {
    /// The specification's spelling of ``EngagementType/qr``.
    public static let QR = EngagementType.qr
    /// The specification's spelling of ``EngagementType/nfc``.
    public static let NFC = EngagementType.nfc
    /// The specification's spelling of ``EngagementType/toApp``.
    public static let TO_APP = EngagementType.toApp
}

extension MdocEngagementManager {
    /// `createEngagement(_:config:)` with the specification's argument label.
    @discardableResult
    public func createEngagement(type: EngagementType, config: EngagementConfig = EngagementConfig())
        async throws(ProximityError) -> MdocEngagement {
        try await createEngagement(type, config: config)
    }
}

extension EngagementConfig {
    /// `with(readerEngagementUri:)` in the specification's spelling.
    public func copy(readerEngagementUri uri: String) -> EngagementConfig { with(readerEngagementUri: uri) }
}
