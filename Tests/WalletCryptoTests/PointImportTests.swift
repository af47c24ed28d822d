import Testing
@testable import WalletCrypto

/// Public points start from a copy of the curve's parameters-only key (issue 16): the same
/// points must be accepted and refused, with the same coordinates, as building the key
/// from the group name.
@Suite("Point import from the curve's template agrees with import from data")
struct PointImportTests {
    /// The field prime p of each curve, big-endian.
    static func prime(_ curve: ECCurve) -> [UInt8] {
        switch curve {
        case .p256: return hexBytes("ffffffff00000001000000000000000000000000ffffffffffffffffffffffff")
        case .p384: return hexBytes("ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff"
                                    + "fffeffffffff0000000000000000ffffffff")
        case .p521: return hexBytes("01ff" + String(repeating: "ff", count: 64))
        }
    }

    static func hexBytes(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let next = text.index(index, offsetBy: 2)
            bytes.append(UInt8(text[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }

    /// Accepted or refused alike; when accepted, the same x and y.
    private static func agree(_ point: [UInt8], _ curve: ECCurve, sourceLocation: SourceLocation = #_sourceLocation) throws -> Bool {
        let template = try? curve.importPublicPoint(point)
        let fromData = try? curve.importPublicPointFromData(point)
        #expect((template == nil) == (fromData == nil), "\(curve) \(point.count) bytes", sourceLocation: sourceLocation)
        if let template, let fromData {
            let n = curve.coordinateByteCount
            #expect(try template.integerParameter("qx", width: n) == fromData.integerParameter("qx", width: n), sourceLocation: sourceLocation)
            #expect(try template.integerParameter("qy", width: n) == fromData.integerParameter("qy", width: n), sourceLocation: sourceLocation)
        }
        return template != nil
    }

    @Test("valid, compressed, off-curve, out-of-range and zero points on every curve")
    func agreement() throws {
        for curve in ECCurve.allCases {
            let n = curve.coordinateByteCount
            let key = try ECPrivateKey.generate(curve: curve).publicKey
            let x = key.x, y = key.y
            #expect(try Self.agree([0x04] + x + y, curve))
            #expect(try Self.agree([y[n - 1] & 1 == 0 ? 0x02 : 0x03] + x, curve))
            #expect(try Self.agree([y[n - 1] & 1 == 0 ? 0x03 : 0x02] + x, curve))    // the other y: also on the curve
            var offCurve = y
            offCurve[n - 1] ^= 1
            #expect(try !Self.agree([0x04] + x + offCurve, curve))
            let p = Self.prime(curve)
            #expect(try !Self.agree([0x04] + p + y, curve))                      // x = p
            #expect(try !Self.agree([0x04] + x + p, curve))                      // y = p
            #expect(try !Self.agree([0x04] + [UInt8](repeating: 0xFF, count: 2 * n), curve))
            #expect(try !Self.agree([0x04] + [UInt8](repeating: 0, count: 2 * n), curve))
            #expect(try !Self.agree([0x02] + p, curve))                          // compressed x = p
            #expect(try !Self.agree([0x00], curve))                              // the point at infinity
            // An x with no y on the curve, compressed: refused by both (found by trying;
            // about half of all x have no y, so 256 tries all finding one would be a
            // 2^-256 event, where the 16 tried before failed once in about 65,000 runs).
            var candidate = x
            var refused = 0
            for k in 0...255 where refused == 0 {
                candidate[n - 1] = UInt8(k)
                if try !Self.agree([0x02] + candidate, curve) { refused += 1 }
            }
            #expect(refused > 0)
            // A P-256 point on another curve's template is refused.
            if curve != .p256 {
                let other = try ECPrivateKey.generate(curve: .p256).publicKey
                #expect(try !Self.agree([0x04] + other.x + other.y, curve))
            }
        }
    }

    @Test("x = p for a point on the curve at x = 0 is refused, not reduced")
    func coordinateAboveFieldPrime() throws {
        // (0, sqrt(b)) is on P-256: b is a square mod p, and p ≡ 3 mod 4, so sqrt(b) = b^((p+1)/4).
        // Written with x = p, the same point in a non-canonical encoding; reduced mod p it
        // would pass the curve equation.
        let p = Self.prime(.p256)
        let y = Self.hexBytes("66485c780e2f83d72433bd5d84a06bb6541c2af31dae871728bf856a174f93f4")
        #expect(try Self.agree([0x04] + [UInt8](repeating: 0, count: 32) + y, .p256))
        #expect(try !Self.agree([0x04] + p + y, .p256))
        #expect(throws: CryptoError.self) { try ECPublicKey(x963Representation: [0x04] + p + y, curve: .p256) }
    }
}
