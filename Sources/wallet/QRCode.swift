internal import CQREncode
import Foundation

/// A QR code symbol made by libqrencode, for what a person scans from the terminal
/// (the demo, `wallet serve issuer` offers, `wallet serve verifier` requests).
struct QRCode {
    /// Modules per side.
    let size: Int
    /// Row-major dark (true) / light modules, `size * size` of them.
    let modules: [Bool]

    /// Encodes `text` as 8-bit data at error-correction level M, in the smallest version
    /// that holds it; nil when it does not fit a QR symbol (about 2.3 KB at level M).
    init?(_ text: String) {
        guard let code = QRcode_encodeString8bit(text, 0, QR_ECLEVEL_M) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard width > 0, let data = code.pointee.data else { return nil }
        size = width
        // Bit 0 of each byte is the module's colour (qrencode.h, "Symbol data").
        modules = (0..<(width * width)).map { data[$0] & 1 == 1 }
    }

    /// Whether the module at `row`, `column` is dark; outside the symbol (the quiet
    /// zone) is light.
    func isDark(_ row: Int, _ column: Int) -> Bool {
        guard row >= 0, column >= 0, row < size, column < size else { return false }
        return modules[row * size + column]
    }

    /// The symbol drawn with Unicode half blocks, two module rows per text line, with a
    /// 4-module quiet zone (ISO/IEC 18004 §6.3.8). Colours are set explicitly (black on
    /// bright white, ANSI SGR 30/107, reset at each line end), so the code scans from a
    /// terminal with a dark or a light theme alike.
    func terminalString() -> String {
        let quiet = 4
        var lines: [String] = []
        var row = -quiet
        while row < size + quiet {
            var line = "\u{1B}[30;107m"
            for column in -quiet..<(size + quiet) {
                switch (isDark(row, column), isDark(row + 1, column)) {
                case (false, false): line += " "
                case (true, false): line += "▀"
                case (false, true): line += "▄"
                case (true, true): line += "█"
                }
            }
            lines.append(line + "\u{1B}[0m")
            row += 2
        }
        return lines.joined(separator: "\n")
    }

    /// The symbol as a binary PGM image (`scale` pixels per module, 4-module quiet
    /// zone), for tests and tools that read images.
    func pgm(scale: Int = 4) -> [UInt8] {
        let quiet = 4
        let side = (size + 2 * quiet) * scale
        var image = Array("P5\n\(side) \(side)\n255\n".utf8)
        image.reserveCapacity(image.count + side * side)
        for y in 0..<side {
            for x in 0..<side {
                image.append(isDark(y / scale - quiet, x / scale - quiet) ? 0 : 255)
            }
        }
        return image
    }
}
