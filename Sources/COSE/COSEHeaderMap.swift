import CBOR

/// The value of the `content type` header (label 3): a CoAP Content-Format number or a
/// media type string.
public enum COSEContentType: Hashable, Sendable {
    /// A CoAP Content-Format identifier.
    case coapContentFormat(UInt64)
    /// A media type, such as `application/cwt`.
    case mediaType(String)
}

/// One bucket of header parameters (protected or unprotected), in the order they were
/// received or added. Labels are unique.
public struct COSEHeaderMap: Hashable, Sendable, Sequence {
    /// One header parameter.
    public struct Entry: Hashable, Sendable {
        /// The parameter's label.
        public let label: COSEHeaderLabel
        /// The parameter's value.
        public let value: CBOR
    }

    /// The parameters in order.
    public private(set) var entries: [Entry]

    /// Creates an empty bucket.
    public init() { entries = [] }

    /// Creates a bucket from label/value pairs in order; a repeated label keeps its last value.
    public init(_ pairs: [(COSEHeaderLabel, CBOR)]) {
        entries = []
        for (label, value) in pairs { self[label] = value }
    }

    /// Reads a bucket from a CBOR map whose keys are integer or text labels, rejecting
    /// repeated labels and values of the wrong type for the registered parameters.
    public init(cbor: CBOR) throws(COSEError) {
        guard case .map(let map) = cbor else { throw .malformed(.headerNotAMap) }
        entries = []
        entries.reserveCapacity(map.count)
        var seen = Set<COSEHeaderLabel>()
        for entry in map {
            guard let label = COSEHeaderLabel(cbor: entry.key) else {
                throw .malformed(.invalidHeaderLabel)
            }
            guard seen.insert(label).inserted else { throw .malformed(.repeatedHeaderLabel(label)) }
            entries.append(Entry(label: label, value: entry.value))
        }
        try validateValueTypes()
    }

    /// True when the bucket has no parameters.
    public var isEmpty: Bool { entries.isEmpty }

    /// The number of parameters.
    public var count: Int { entries.count }

    /// The labels in order.
    public var labels: [COSEHeaderLabel] { entries.map(\.label) }

    /// Iterates over the parameters in order.
    public func makeIterator() -> IndexingIterator<[Entry]> { entries.makeIterator() }

    /// The value under `label`; setting replaces it in place, appends it, or (nil) removes it.
    public subscript(label: COSEHeaderLabel) -> CBOR? {
        get { entries.first { $0.label == label }?.value }
        set {
            if let newValue {
                if let index = entries.firstIndex(where: { $0.label == label }) {
                    entries[index] = Entry(label: label, value: newValue)
                } else {
                    entries.append(Entry(label: label, value: newValue))
                }
            } else {
                entries.removeAll { $0.label == label }
            }
        }
    }

    /// The bucket as a CBOR map, in entry order.
    public var cbor: CBOR {
        .map(CBORMap(entries.map { CBORMap.Entry(key: $0.label.cbor, value: $0.value) }))
    }

    // MARK: Typed access

    /// `alg` (1) as an integer, or nil when absent or a text identifier.
    public var algorithmIdentifier: Int? { self[.algorithm]?.intValue }

    /// `alg` (1) as one of the implemented algorithms; nil when absent.
    /// - Throws: `unsupportedAlgorithm` / `unsupportedAlgorithmName` for other identifiers.
    public func algorithm() throws(COSEError) -> COSEAlgorithm? {
        guard let value = self[.algorithm] else { return nil }
        switch value {
        case .textString(let name): throw .unsupportedAlgorithmName(name)
        default:
            guard let identifier = value.intValue else { throw .malformed(.invalidHeaderValue(.algorithm)) }
            return try COSEAlgorithm(identifier: identifier)
        }
    }

    /// `crit` (2): the labels a recipient must understand (empty when absent).
    public var critical: [COSEHeaderLabel] {
        (self[.critical]?.arrayValue ?? []).compactMap { COSEHeaderLabel(cbor: $0) }
    }

    /// `content type` (3).
    public var contentType: COSEContentType? {
        switch self[.contentType] {
        case .unsigned(let number): .coapContentFormat(number)
        case .textString(let type): .mediaType(type)
        default: nil
        }
    }

    /// `kid` (4).
    public var keyID: [UInt8]? { self[.keyID]?.bytesValue }

    /// `IV` (5).
    public var iv: [UInt8]? { self[.iv]?.bytesValue }

    /// `Partial IV` (6).
    public var partialIV: [UInt8]? { self[.partialIV]?.bytesValue }

    /// `x5chain` (33) as DER certificates, leaf first: one byte string or an array of them.
    public var x5chainDER: [[UInt8]]? {
        switch self[.x5chain] {
        case .byteString(let der): return [der]
        case .array(let items): return items.compactMap(\.bytesValue)
        default: return nil
        }
    }

    /// Checks the CBOR types of the registered parameters (RFC 9052 §3.1, RFC 9360 §2).
    func validateValueTypes() throws(COSEError) {
        for entry in entries {
            switch entry.label {
            case .algorithm:
                guard entry.value.intValue != nil || entry.value.stringValue != nil else {
                    throw .malformed(.invalidHeaderValue(.algorithm))
                }
            case .critical:
                guard let labels = entry.value.arrayValue, !labels.isEmpty,
                      labels.allSatisfy({ COSEHeaderLabel(cbor: $0) != nil }) else {
                    throw .malformed(.invalidHeaderValue(.critical))
                }
            case .contentType:
                guard entry.value.uint64Value != nil || entry.value.stringValue != nil else {
                    throw .malformed(.invalidHeaderValue(.contentType))
                }
            case .keyID, .iv, .partialIV:
                guard entry.value.bytesValue != nil else { throw .malformed(.invalidHeaderValue(entry.label)) }
            case .x5chain:
                switch entry.value {
                case .byteString: break
                case .array(let items) where !items.isEmpty && items.allSatisfy({ $0.bytesValue != nil }): break
                default: throw .malformed(.invalidHeaderValue(.x5chain))
                }
            default:
                break
            }
        }
        if self[.iv] != nil && self[.partialIV] != nil {
            throw .malformed(.bothIVs)
        }
    }
}
