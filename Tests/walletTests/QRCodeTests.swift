import Foundation
import Testing
@testable import wallet

@Suite("QR codes drawn for people to scan")
struct QRCodeTests {
    static let zbarimg = ["/usr/bin/zbarimg", "/usr/local/bin/zbarimg"].first { FileManager.default.isExecutableFile(atPath: $0) }

    @Test("a QR code of an offer URI decodes back to the same text with zbarimg (an independent decoder)",
          .enabled(if: zbarimg != nil, "zbar-tools is not installed (.ci/run installs it)"))
    func roundTripThroughZbar() async throws {
        let text = "openid-credential-offer://?credential_offer_uri=http%3A%2F%2F127.0.0.1%3A8080%2Foffers%2F7f3c2a"
        let code = try #require(QRCode(text))
        #expect(code.modules.count == code.size * code.size)
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("qr-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let image = directory.appendingPathComponent("code.pgm")
        try Data(code.pgm(scale: 4)).write(to: image)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(Self.zbarimg))
        process.arguments = ["--raw", "-q", image.path]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let decoded = String(decoding: await WalletProcess.readAll(output.fileHandleForReading), as: UTF8.self)
        process.waitUntilExit()   // the pipe's end of file: the child has exited
        #expect(process.terminationStatus == 0)
        #expect(decoded.trimmingCharacters(in: .newlines) == text)
    }

    @Test("the terminal rendering has two module rows per line, the quiet zone, and explicit colours")
    func terminalRendering() throws {
        let code = try #require(QRCode("hello"))
        let lines = code.terminalString().split(separator: "\n")
        #expect(lines.count == (code.size + 8 + 1) / 2)
        for line in lines {
            #expect(line.hasPrefix("\u{1B}[30;107m") && line.hasSuffix("\u{1B}[0m"))
            #expect(line.dropFirst(9).dropLast(4).count == code.size + 8)
        }
        // The finder pattern's top row is seven dark modules after the quiet zone.
        #expect((0..<7).allSatisfy { code.isDark(0, $0) } && !code.isDark(0, 7))
        #expect(!code.isDark(-1, 0) && !code.isDark(code.size, 0))
    }

    @Test("text too long for any QR symbol is refused")
    func tooLong() {
        #expect(QRCode(String(repeating: "x", count: 5000)) == nil)
    }
}
