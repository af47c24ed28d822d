import CBOR

/// What COSE_Sign1 and COSE_Mac0 share (RFC 9052 §4.2, §6.2): the four-element layout
/// `[protected: bstr, unprotected: map, payload: bstr / nil, signature-or-tag: bstr]`,
/// the header rules, and the exact bytes.
///
/// Both types parse, build and encode through this one implementation, so their header
/// rules cannot drift apart (RFC 9052 §3: a label in one bucket only, `crit` protected,
/// the registered parameters' value types).
public protocol COSEMessage: Hashable, Sendable {
    /// The CBOR tag of the tagged form (18 for COSE_Sign1, 17 for COSE_Mac0).
    static var tag: UInt64 { get }
    /// The message as parsed or built.
    var parts: COSEMessageParts { get }
    /// Wraps parts parsed or built for this message type.
    /// - Throws: `unexpectedTag` for parts of another message type.
    init(parts: COSEMessageParts) throws(COSEError)
}

extension COSEMessage {
    /// Parses a message, tagged or untagged.
    /// - Parameter understoodCriticalLabels: header labels the caller processes besides
    ///   those this module understands, which `crit` may list.
    /// - Throws: `cbor` for bad CBOR, `unexpectedTag` for another tag, `malformed` for a
    ///   wrong shape, and the header errors of `COSEHeaders`.
    public init(encoded bytes: [UInt8], understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        let item: CBORItem
        do { item = try CBOR.decodeItem(bytes, options: COSEDecoding.options) } catch { throw .cbor(error) }
        try self.init(item: item, understoodCriticalLabels: understoodCriticalLabels)
    }

    /// Parses a message found inside a larger decoded structure (such as mdoc
    /// `issuerAuth`), keeping the item's exact bytes as `encodedBytes`.
    public init(item: CBORItem, understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        try self.init(parts: try COSEMessageParts(value: item.value, tag: Self.tag, understoodCriticalLabels: understoodCriticalLabels,
                                                  encodedBytes: item.encodedBytes))
    }

    /// Parses a message from a decoded value. The protected header and payload byte
    /// strings are kept as received; `encodedBytes` is the value's re-encoding, so prefer
    /// `init(item:)` when the exact outer bytes matter.
    public init(cbor: CBOR, understoodCriticalLabels: Set<COSEHeaderLabel> = []) throws(COSEError) {
        try self.init(parts: try COSEMessageParts(value: cbor, tag: Self.tag, understoodCriticalLabels: understoodCriticalLabels))
    }

    /// The protected and unprotected headers.
    public var headers: COSEHeaders { parts.headers }
    /// The payload, or nil when it is detached (transported separately).
    public var payload: [UInt8]? { parts.payload }
    /// Whether the message carried (or is encoded with) its tag.
    public var isTagged: Bool { parts.isTagged }
    /// The encoded message: the bytes it was parsed from, or the encoding of a built one.
    public var encodedBytes: [UInt8] { parts.encodedBytes }
    /// The message as a CBOR value (tagged when `isTagged`).
    public var cbor: CBOR { parts.cbor }

    /// The payload the signature or tag covers: the attached one, or `detachedPayload`.
    /// - Throws: `missingPayload` when neither or `unexpectedDetachedPayload` when both are present.
    func content(detachedPayload: [UInt8]?) throws(COSEError) -> [UInt8] {
        switch (payload, detachedPayload) {
        case (let payload?, nil): return payload
        case (nil, let payload?): return payload
        case (nil, nil): throw .missingPayload
        case (.some, .some): throw .unexpectedDetachedPayload
        }
    }
}

/// The four parts of a COSE_Sign1 or COSE_Mac0, with its tag and exact bytes. Only
/// this module makes them: by parsing, or by signing / MACing.
public struct COSEMessageParts: Hashable, Sendable {
    /// The protected and unprotected headers.
    public let headers: COSEHeaders
    /// The payload, or nil when it is detached.
    public let payload: [UInt8]?
    /// The signature (COSE_Sign1) or authentication tag (COSE_Mac0).
    public let trailer: [UInt8]
    /// Whether the message carried (or is encoded with) its tag.
    public let isTagged: Bool
    /// The message's bytes: as received when parsed from bytes or an item, else its encoding.
    public let encodedBytes: [UInt8]
    /// The tag of the message type these parts were read or built for.
    let tag: UInt64

    /// Parses a message of the type tagged `tag` from a decoded value; its bytes are
    /// `encodedBytes`, or the value's encoding. They are copied only once every check has
    /// passed, so refusing a large structure costs no copy of it.
    init(value: CBOR, tag expectedTag: UInt64, understoodCriticalLabels: Set<COSEHeaderLabel>,
         encodedBytes: ArraySlice<UInt8>? = nil) throws(COSEError) {
        var content = value
        var tagged = false
        if case .tagged(let tag, let inner) = value {
            guard tag == expectedTag else { throw .unexpectedTag(tag) }
            content = inner
            tagged = true
        }
        guard case .array(let elements) = content else { throw .malformed(.notAnArray) }
        guard elements.count == 4 else { throw .malformed(.wrongElementCount(expected: 4, actual: elements.count)) }
        guard case .byteString(let protectedBytes) = elements[0] else {
            throw .malformed(.wrongElementType(.protectedHeader))
        }
        guard case .map = elements[1] else { throw .malformed(.wrongElementType(.unprotectedHeader)) }
        switch elements[2] {
        case .byteString(let bytes): payload = bytes
        case .null: payload = nil
        default: throw .malformed(.wrongElementType(.payload))
        }
        guard case .byteString(let trailer) = elements[3] else {
            throw .malformed(.wrongElementType(.signatureOrTag))
        }
        headers = try COSEHeaders(protectedBytes: protectedBytes, unprotected: elements[1],
                                  understoodCriticalLabels: understoodCriticalLabels)
        self.trailer = trailer
        isTagged = tagged
        tag = expectedTag
        self.encodedBytes = encodedBytes.map { Array($0) } ?? value.encoded()
    }

    /// A message being built: encoded from its parts, with `tag` when `tagged`.
    init(headers: COSEHeaders, payload: [UInt8]?, trailer: [UInt8], tag: UInt64, tagged: Bool) {
        self.headers = headers
        self.payload = payload
        self.trailer = trailer
        self.isTagged = tagged
        self.tag = tag
        self.encodedBytes = Self.value(headers: headers, payload: payload, trailer: trailer, tag: tagged ? tag : nil).encoded()
    }

    /// The message as a CBOR value (tagged when `isTagged`).
    var cbor: CBOR { Self.value(headers: headers, payload: payload, trailer: trailer, tag: isTagged ? tag : nil) }

    /// These parts, checked to belong to the message type tagged `tag`.
    func checked(for tag: UInt64) throws(COSEError) -> COSEMessageParts {
        guard self.tag == tag else { throw .unexpectedTag(self.tag) }
        return self
    }

    /// The headers of a message to build with `algorithm`: an `alg` the caller put in
    /// either bucket must be `algorithm`; when neither has one, it goes first into the
    /// protected bucket.
    /// - Throws: `algorithmKeyMismatch` for another `alg`, and the rules of `COSEHeaders`.
    static func headers(for algorithm: COSEAlgorithm, protected: COSEHeaderMap,
                        unprotected: COSEHeaderMap) throws(COSEError) -> COSEHeaders {
        var named = false
        for bucket in [protected, unprotected] {
            guard let value = try bucket.algorithm() else { continue }
            guard value == algorithm else { throw .algorithmKeyMismatch }
            named = true
        }
        var protected = protected
        if !named {
            protected = COSEHeaderMap([(.algorithm, CBOR(algorithm.rawValue))] + protected.entries.map { ($0.label, $0.value) })
        }
        return try COSEHeaders(protected: protected, unprotected: unprotected)
    }

    private static func value(headers: COSEHeaders, payload: [UInt8]?, trailer: [UInt8], tag: UInt64?) -> CBOR {
        let array = CBOR.array([.byteString(headers.protectedBytes), headers.unprotected.cbor,
                                payload.map(CBOR.byteString) ?? .null, .byteString(trailer)])
        if let tag { return .tagged(tag, array) }
        return array
    }
}
