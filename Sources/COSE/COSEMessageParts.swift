import CBOR

/// The common four-element layout of COSE_Sign1 and COSE_Mac0:
/// `[protected: bstr, unprotected: map, payload: bstr / nil, signature-or-tag: bstr]`.
struct COSEMessageParts {
    let headers: COSEHeaders
    let payload: [UInt8]?
    let trailer: [UInt8]
    let isTagged: Bool

    init(value: CBOR, expectedTag: UInt64, what: String,
         understoodCriticalLabels: Set<COSEHeaderLabel>) throws(COSEError) {
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
    }

    static func value(headers: COSEHeaders, payload: [UInt8]?, trailer: [UInt8], tag: UInt64?) -> CBOR {
        let array = CBOR.array([.byteString(headers.protectedBytes), headers.unprotected.cbor,
                                payload.map(CBOR.byteString) ?? .null, .byteString(trailer)])
        if let tag { return .tagged(tag, array) }
        return array
    }

    static func encode(headers: COSEHeaders, payload: [UInt8]?, trailer: [UInt8], tag: UInt64?) -> [UInt8] {
        value(headers: headers, payload: payload, trailer: trailer, tag: tag).encoded()
    }

    /// Exactly one of the attached and detached payloads must be present.
    static func resolvePayload(attached: [UInt8]?, detached: [UInt8]?) throws(COSEError) -> [UInt8] {
        switch (attached, detached) {
        case (let payload?, nil): return payload
        case (nil, let payload?): return payload
        case (nil, nil): throw .missingPayload
        case (.some, .some): throw .unexpectedDetachedPayload
        }
    }

    /// False when either bucket names an `alg` other than `algorithm`.
    static func algorithmFits(_ algorithm: COSEAlgorithm, protected: COSEHeaderMap,
                              unprotected: COSEHeaderMap) throws(COSEError) -> Bool {
        for bucket in [protected, unprotected] {
            if let named = try bucket.algorithm(), named != algorithm { return false }
        }
        return true
    }
}
