import Foundation
import Testing

/// Keeps the documentation's examples and the code that compiles them in step (issue 15
/// acceptance 2).
///
/// Every ```` ```swift ```` block of README.md and docs/*.md must appear, line for line,
/// in a test between `// snippet: <file>#<n>` and `// end snippet` (blocks are numbered
/// from 1 in each file; indentation is compared relative to the block; an `import X`
/// line of the example must be an import of that test file instead). Every Swift example
/// of ../shared/spec must appear between `// spec: <file>` and `// end spec`, as a run of
/// the specification's lines (compared with surrounding spaces trimmed, blank lines
/// skipped). So an example that changes without its test, or a test that drifts from
/// its example, fails here; the test targets compile (and run) the examples themselves.
@Suite("Documentation examples are the compiled ones")
struct DocSnippetSyncTests {
    /// The package root: this file is Tests/WalletKitTests/Docs/DocSnippetSyncTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()
    static let spec = root.deletingLastPathComponent().appendingPathComponent("shared/spec")

    /// The Swift examples in the specification files: how many each holds.
    static let specExamples = [
        "issuance.txt": 7,                  // each under a "Swift" heading
        "presentation.txt": 5,              // each under a "Swift" heading
        "proximity-events-and-ui.txt": 2,   // "iOS/Swift" and "Pattern 3: QR-Only App (iOS mdoc Holder)"
    ]

    struct Region {
        let key: String
        let file: String
        let lines: [String]
    }

    static func read(_ url: URL) throws -> String { try String(contentsOf: url, encoding: .utf8) }

    /// The ```swift blocks of a Markdown file, in order.
    static func examples(in text: String) -> [[String]] {
        var blocks: [[String]] = []
        var current: [String]?
        for line in text.components(separatedBy: "\n") {
            if current == nil {
                if line == "```swift" { current = [] }
            } else if line == "```" {
                blocks.append(current ?? [])
                current = nil
            } else {
                current?.append(line)
            }
        }
        return blocks
    }

    /// Lines without trailing spaces, without the indentation they share, without blank
    /// lines at either end.
    static func normalized(_ lines: [String]) -> [String] {
        var trimmed = lines.map { line -> String in
            var line = line
            while line.last == " " || line.last == "\t" { line.removeLast() }
            return line
        }
        while trimmed.first?.isEmpty == true { trimmed.removeFirst() }
        while trimmed.last?.isEmpty == true { trimmed.removeLast() }
        let indent = trimmed.filter { !$0.isEmpty }.map { $0.prefix { $0 == " " }.count }.min() ?? 0
        return trimmed.map { $0.isEmpty ? $0 : String($0.dropFirst(indent)) }
    }

    /// The regions marked `// <marker>: key` … `// end <marker>` in the test sources.
    static func regions(marker: String) throws -> [Region] {
        let tests = root.appendingPathComponent("Tests")
        var regions: [Region] = []
        guard let files = FileManager.default.enumerator(at: tests, includingPropertiesForKeys: nil) else { return [] }
        for case let url as URL in files where url.pathExtension == "swift" {
            var open: (key: String, lines: [String])?
            for line in try read(url).components(separatedBy: "\n") {
                let text = line.trimmingCharacters(in: .whitespaces)
                if text.hasPrefix("// \(marker): ") {
                    open = (String(text.dropFirst("// \(marker): ".count)), [])
                } else if text == "// end \(marker)", let region = open {
                    regions.append(Region(key: region.key, file: url.path, lines: region.lines))
                    open = nil
                } else {
                    open?.lines.append(line)
                }
            }
        }
        return regions
    }

    static func imports(of file: String) throws -> Set<String> {
        Set(try read(URL(fileURLWithPath: file)).components(separatedBy: "\n").compactMap { line in
            let words = line.split(separator: " ")
            guard let index = words.firstIndex(of: "import"), index + 1 < words.count else { return nil }
            return String(words[index + 1])
        })
    }

    @Test("every Swift example of README.md and docs/ is mirrored, verbatim, in a test")
    func documentation() throws {
        var markdown = [Self.root.appendingPathComponent("README.md")]
        let docs = Self.root.appendingPathComponent("docs")
        markdown += try FileManager.default.contentsOfDirectory(at: docs, includingPropertiesForKeys: nil)
            .filter { $0.pathExtension == "md" }.sorted { $0.path < $1.path }
        var expected: [String: [String]] = [:]
        for file in markdown {
            let name = file.path.replacingOccurrences(of: Self.root.path + "/", with: "")
            for (index, block) in Self.examples(in: try Self.read(file)).enumerated() {
                expected["\(name)#\(index + 1)"] = block
            }
        }
        #expect(expected.count >= 30, "the README and the guides hold their examples")
        let regions = try Self.regions(marker: "snippet")
        for region in regions {
            guard let example = expected[region.key] else {
                Issue.record("\(region.file): the region \(region.key) names no example (renumbered or removed?)")
                continue
            }
            let imports = example.filter { $0.hasPrefix("import ") }.map { String($0.dropFirst("import ".count)) }
            let fileImports = try Self.imports(of: region.file)
            for module in imports where !fileImports.contains(module) {
                Issue.record("\(region.file): \(region.key) imports \(module), the test file does not")
            }
            let wanted = Self.normalized(example.filter { !$0.hasPrefix("import ") })
            let mirrored = Self.normalized(region.lines)
            if wanted != mirrored {
                let line = zip(wanted, mirrored).enumerated().first { $0.element.0 != $0.element.1 }?.offset
                    ?? min(wanted.count, mirrored.count)
                Issue.record("""
                    \(region.key) differs from its test in \(region.file) at line \(line + 1):
                      docs: \(line < wanted.count ? wanted[line] : "<end>")
                      test: \(line < mirrored.count ? mirrored[line] : "<end>")
                    """)
            }
        }
        let mirrored = Set(regions.map(\.key))
        for key in expected.keys.sorted() where !mirrored.contains(key) {
            Issue.record("\(key) is compiled by no test: mirror it between // snippet: \(key) and // end snippet")
        }
    }

    @Test("every Swift example of the specification is mirrored, verbatim, in a test")
    func specification() throws {
        let regions = try Self.regions(marker: "spec")
        var found: [String: Set<Int>] = [:]
        for region in regions {
            guard Self.specExamples[region.key] != nil else {
                Issue.record("\(region.file): no specification file \(region.key)")
                continue
            }
            let text = try Self.read(Self.spec.appendingPathComponent(region.key)).components(separatedBy: "\n")
                .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            let wanted = region.lines.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard !wanted.isEmpty, wanted.count <= text.count,
                  let start = (0...(text.count - wanted.count)).first(where: { Array(text[$0..<($0 + wanted.count)]) == wanted }) else {
                Issue.record("\(region.file): a region marked // spec: \(region.key) is not a run of its lines")
                continue
            }
            found[region.key, default: []].insert(start)
        }
        for (file, count) in Self.specExamples {
            #expect(found[file]?.count == count, "\(file): \(found[file]?.count ?? 0) of its \(count) Swift examples are compiled")
        }
    }

    @Test("the checker notices a changed line, a missing example and an example outside its file")
    func checkerControls() {
        let example = ["let a = 1", "    print(a)"]
        #expect(Self.normalized(["        let a = 1", "            print(a)   "]) == Self.normalized(example))
        #expect(Self.normalized(["let a = 2", "    print(a)"]) != Self.normalized(example))
        #expect(Self.examples(in: "text\n```swift\nlet a = 1\n```\n```sh\nls\n```\n```swift\nb()\n```\n") == [["let a = 1"], ["b()"]])
    }
}
