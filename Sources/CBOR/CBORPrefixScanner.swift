/// Finds where the first CBOR data item of a growing buffer ends, reading each byte at
/// most once however the buffer grows: a stream reassembler (L2CAP carries session
/// messages back to back, delimited only by their own encoding) asks after every chunk
/// whether a whole item has arrived, and re-decoding the buffer each time would be
/// quadratic in the message size.
///
/// It reads the structure only (heads, string lengths, container counts, breaks). It
/// does not validate what the decoder validates (UTF-8, simple values, keys, chunk
/// types): when it reports a complete item, the caller decodes that item once. When it
/// reports `malformed`, the structure is not well-formed CBOR (a reserved head, a stray
/// break, nesting past the decoder's depth), and the decoder gives the error.
package struct CBORPrefixScanner: Sendable {
    /// What the buffer holds so far.
    package enum Outcome: Equatable, Sendable {
        /// A whole item: the first `byteCount` bytes.
        case complete(byteCount: Int)
        /// The start of an item; more bytes are needed.
        case needMore
        /// The start of an item longer than `limit`: of at least `byteCount` bytes.
        case tooLarge(byteCount: Int)
        /// Not the start of a well-formed item of at most `limit` bytes.
        case malformed
    }

    /// The largest item looked for: no string, array or map can declare more than this.
    package let limit: Int
    /// The offset of the next head to read (past a string's content once its head is read).
    private var position = 0
    /// For each open container, the items it still expects; `nil` for an indefinite one
    /// (it ends at a break).
    private var open: [Int?] = []
    /// Whether the outermost item has ended.
    private var done = false
    /// Whether the structure was found malformed: the outcome stays so until ``reset()``.
    private var failed = false
    /// Heads and breaks read since ``reset()``: each once, however the buffer grew.
    package private(set) var headsRead = 0

    /// A scanner for items of at most `limit` bytes (at most `Int.max / 4`: the scan adds
    /// and doubles declared lengths within the limit, which must not overflow).
    package init(limit: Int) {
        self.limit = min(max(limit, 0), Int.max / 4)
    }

    /// Starts again with the next item (the buffer now begins after the previous one).
    package mutating func reset() {
        position = 0
        open.removeAll(keepingCapacity: true)
        done = false
        failed = false
        headsRead = 0
    }

    /// Reads what `buffer` adds since the last call. The buffer must begin where it
    /// began at the last call (since ``reset()``) and may only have grown.
    package mutating func scan(_ buffer: UnsafeBufferPointer<UInt8>) -> Outcome {
        let outcome = advance(buffer)
        if outcome == .malformed { failed = true }
        return outcome
    }

    private mutating func advance(_ buffer: UnsafeBufferPointer<UInt8>) -> Outcome {
        guard !failed else { return .malformed }
        while !done {
            guard position < buffer.count else { return .needMore }
            let initial = buffer[position]
            let major = initial >> 5, info = initial & 0x1F
            if initial == 0xFF {
                // A break closes the innermost indefinite container, and only that.
                guard let innermost = open.last, innermost == nil else { return .malformed }
                open.removeLast()
                position += 1
                headsRead += 1
                finishItem()
                continue
            }
            let headLength: Int
            switch info {
            case 0..<24: headLength = 1
            case 24: headLength = 2
            case 25: headLength = 3
            case 26: headLength = 5
            case 27: headLength = 9
            case 31: headLength = 1
            default: return .malformed   // 28-30 are reserved
            }
            guard buffer.count - position >= headLength else { return .needMore }
            var argument = UInt64(info < 24 ? info : 0)
            if headLength > 1 {
                for k in 1..<headLength { argument = argument << 8 | UInt64(buffer[position + k]) }
            }
            position += headLength
            headsRead += 1
            if info == 31 {
                // Indefinite strings, arrays and maps; no other major type has one.
                guard (2...5).contains(major) else { return .malformed }
                guard push(nil) else { return .malformed }
                continue
            }
            switch major {
            case 2, 3:
                // Checked before any arithmetic: an argument may be up to 2^64 - 1.
                guard argument <= UInt64(limit) else { return .tooLarge(byteCount: limit &+ 1) }
                position += Int(argument)
                finishItem()
            case 4, 5:
                // Every element takes a byte at least.
                guard argument <= UInt64(limit) else { return .tooLarge(byteCount: limit &+ 1) }
                let items = Int(argument) * (major == 5 ? 2 : 1)
                if items == 0 {
                    finishItem()
                } else {
                    guard push(items) else { return .malformed }
                }
            case 6:
                guard push(1) else { return .malformed }   // a tag wraps exactly one item
            default:
                finishItem()   // integers, simple values, floats
            }
            guard position <= limit else { return .tooLarge(byteCount: position) }
        }
        return position <= buffer.count ? .complete(byteCount: position) : .needMore
    }

    /// Opens a container; false past the decoder's greatest depth.
    private mutating func push(_ items: Int?) -> Bool {
        guard open.count < CBORDecodingOptions.maxSupportedDepth + 1 else { return false }
        open.append(items)
        return true
    }

    /// One item ended: it counts towards its container, which may end in turn.
    private mutating func finishItem() {
        while let innermost = open.last {
            guard let remaining = innermost else { return }   // indefinite: ends at its break
            if remaining > 1 {
                open[open.count - 1] = remaining - 1
                return
            }
            open.removeLast()
        }
        done = true
    }
}
