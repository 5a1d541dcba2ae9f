import Foundation
import JSONCodec
import Testing
import TestSupport

/// The sessions the documents show are run: each `→` line goes to a fresh `chatfeedd`, each `←`
/// line must match the next line it writes (keys and values; `…` stands for anything), and
/// nothing else may come. So docs/PROTOCOL.md's session and the README's cannot drift from the
/// daemon again.
@Suite struct DocumentSessionTests {
    @Test func protocolDocumentsSessionRuns() throws {
        try run(DocumentSession.steps(in: try Self.read("docs/PROTOCOL.md"), section: "## A session"), "docs/PROTOCOL.md")
    }

    @Test func protocolDocumentsMultiUserSessionRuns() throws {
        try run(
            DocumentSession.steps(in: try Self.read("docs/PROTOCOL.md"), section: "## A session with several users"),
            "docs/PROTOCOL.md")
    }

    @Test func readmesSessionRuns() throws {
        try run(DocumentSession.steps(in: try Self.read("README.md"), section: nil), "README.md")
    }

    @Test func thePatternsMatchWhatTheySayAndNothingElse() throws {
        let line = try JSONValue(parsing: Array(#"{"a":1,"b":{"c":"xyz","d":[1,2]},"e":null}"#.utf8))
        for (pattern, matches) in [
            (#"{"a":1,"b":{"c":"xyz","d":[1,2]},"e":null}"#, true),
            (#"{"a":1,"b":{…},"e":null}"#, true),
            (#"{"a":1,…}"#, true),
            (#"{"a":1,"b":{"c":"xy…",…},…}"#, true),
            (#"{"a":1,"b":{"c":"xyz","d":[1,…]},"e":null}"#, true),
            (#"{"a":1,"b":{…}}"#, false),  // "e" is missing from the pattern
            (#"{"a":2,…}"#, false),
            (#"{"a":1,"b":{"c":"xz…",…},…}"#, false),
            (#"{"a":1,"b":{"c":"xyz","d":[1]},"e":null}"#, false),
            (#"{"a":1,"b":{…},"e":null,"f":0}"#, false),
        ] {
            let mismatch = try DocumentSession.Pattern(parsing: pattern).mismatch(with: line)
            #expect((mismatch == nil) == matches, "\(pattern): \(mismatch ?? "matches")")
        }
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOf: BuiltExecutable.packageRoot.appendingPathComponent(path), encoding: .utf8)
    }

    func run(_ steps: [DocumentSession.Step], _ document: String) throws {
        #expect(steps.contains { if case .send = $0 { true } else { false } }, "\(document) has no session")
        let directory = try TemporaryDirectory()
        let received = LockedBox<[String]>([])
        let daemon = try ChildProcess(
            executable: BuiltExecutable.path("chatfeedd"),
            arguments: ["--database", directory.path("chat.sqlite"), "--log-level", "warning"],
            stderrPath: directory.path("stderr.log"),
            onLine: { line in received.withLock { $0.append(String(decoding: line, as: UTF8.self)) } }, onEnd: {})
        var taken = 0
        for step in steps {
            switch step {
            case .send(let line, _):
                #expect(daemon.send(Array((line + "\n").utf8)), "chatfeedd stopped: \(daemon.stderrTail())")
            case .receive(let pattern, let number):
                let deadline = Date().addingTimeInterval(10)
                while received.withLock({ $0.count }) <= taken && Date() < deadline { usleep(1_000) }
                guard let line = received.withLock({ $0.count > taken ? $0[taken] : nil }) else {
                    Issue.record("\(document):\(number): nothing came for \(pattern)")
                    daemon.closeStdin()
                    return
                }
                taken += 1
                let mismatch = try DocumentSession.Pattern(parsing: pattern).mismatch(with: try JSONValue(parsing: Array(line.utf8)))
                #expect(mismatch == nil, "\(document):\(number): \(mismatch ?? "")\n  expected \(pattern)\n  received \(line)")
            }
        }
        daemon.closeStdin()
        #expect(daemon.waitForExit(timeout: 20) == 0)
        let extra = received.withLock { Array($0.dropFirst(taken)) }
        #expect(extra.isEmpty, "\(document): the daemon also sent \(extra)")
    }
}

/// The `→`/`←` lines of a document's session and the patterns of its `←` lines.
enum DocumentSession {
    enum Step {
        /// A line to send, and its line number in the document.
        case send(String, Int)
        /// A pattern for the next line received, and its line number.
        case receive(String, Int)
    }

    /// The `→ ` and `← ` lines inside code blocks, of the whole document or of the section that
    /// starts with the heading `section` (up to the next heading of its level).
    static func steps(in document: String, section: String?) -> [Step] {
        var steps: [Step] = []
        var inSection = section == nil
        var inCode = false
        let level = section.map { String($0.prefix { $0 == "#" }) + " " }
        for (offset, line) in document.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.hasPrefix("```") { inCode.toggle() }
            if !inCode, let section, let level, line.hasPrefix("#") {
                if line == section { inSection = true } else if line.hasPrefix(level) { inSection = false }
            }
            guard inSection, inCode else { continue }
            if line.hasPrefix("→ ") { steps.append(.send(String(line.dropFirst(2)), offset + 1)) }
            if line.hasPrefix("← ") { steps.append(.receive(String(line.dropFirst(2)), offset + 1)) }
        }
        return steps
    }

    /// JSON in which `…` stands for anything: a value (`{…}`, `[…]`), the members an object has
    /// besides those written (`{"id":"a",…}`), the elements after those written (`[1,…]`), the
    /// rest of a string (`"AAAB…"`). Without `…` an object has exactly the keys written.
    indirect enum Pattern {
        case any
        case value(JSONValue)
        case prefix(String)
        case array([Pattern], open: Bool)
        case object([(String, Pattern)], open: Bool)

        struct SyntaxError: Error, CustomStringConvertible {
            var description: String
        }

        init(parsing text: String) throws {
            var scanner = Scanner(Array(text.unicodeScalars))
            self = try scanner.value()
            scanner.skipSpaces()
            guard scanner.atEnd else { throw SyntaxError(description: "text after the pattern at \(scanner.position)") }
        }

        /// Why `value` does not match, or nil when it does.
        func mismatch(with value: JSONValue, at path: String = "$") -> String? {
            switch self {
            case .any:
                return nil
            case .value(let expected):
                return expected == value ? nil : "\(path): expected \(expected), received \(value)"
            case .prefix(let prefix):
                guard let string = value.stringValue, string.hasPrefix(prefix) else {
                    return "\(path): expected a string starting \"\(prefix)\", received \(value)"
                }
                return nil
            case .array(let elements, let open):
                guard let array = value.arrayValue else { return "\(path): expected an array, received \(value)" }
                guard open ? array.count >= elements.count : array.count == elements.count else {
                    return "\(path): expected \(elements.count)\(open ? " or more" : "") elements, received \(array.count)"
                }
                for (index, element) in elements.enumerated() {
                    if let mismatch = element.mismatch(with: array[index], at: "\(path)[\(index)]") { return mismatch }
                }
                return nil
            case .object(let members, let open):
                guard let object = value.objectValue else { return "\(path): expected an object, received \(value)" }
                for (key, pattern) in members {
                    guard let member = object[key] else { return "\(path): no \"\(key)\"" }
                    if let mismatch = pattern.mismatch(with: member, at: "\(path).\(key)") { return mismatch }
                }
                if !open {
                    let extra = object.keys.filter { key in !members.contains { $0.0 == key } }
                    if !extra.isEmpty { return "\(path): keys the document does not show: \(extra)" }
                }
                return nil
            }
        }
    }

    struct Scanner {
        let text: [Unicode.Scalar]
        var position = 0

        init(_ text: [Unicode.Scalar]) { self.text = text }

        var atEnd: Bool { position >= text.count }
        var current: Unicode.Scalar? { atEnd ? nil : text[position] }

        mutating func skipSpaces() {
            while let current, current == " " || current == "\n" { position += 1 }
        }

        mutating func take(_ scalar: Unicode.Scalar) -> Bool {
            skipSpaces()
            guard current == scalar else { return false }
            position += 1
            return true
        }

        mutating func value() throws -> Pattern {
            skipSpaces()
            switch current {
            case "…":
                position += 1
                return .any
            case "{":
                position += 1
                var members: [(String, Pattern)] = []
                if take("}") { return .object([], open: false) }
                repeat {
                    if take("…") {
                        guard take("}") else { throw Pattern.SyntaxError(description: "… must end an object at \(position)") }
                        return .object(members, open: true)
                    }
                    skipSpaces()
                    guard case .value(.string(let key)) = try value() else {
                        throw Pattern.SyntaxError(description: "expected a key at \(position)")
                    }
                    guard take(":") else { throw Pattern.SyntaxError(description: "expected : at \(position)") }
                    members.append((key, try value()))
                } while take(",")
                guard take("}") else { throw Pattern.SyntaxError(description: "expected } at \(position)") }
                return .object(members, open: false)
            case "[":
                position += 1
                var elements: [Pattern] = []
                if take("]") { return .array([], open: false) }
                repeat {
                    if take("…") {
                        guard take("]") else { throw Pattern.SyntaxError(description: "… must end an array at \(position)") }
                        return .array(elements, open: true)
                    }
                    elements.append(try value())
                } while take(",")
                guard take("]") else { throw Pattern.SyntaxError(description: "expected ] at \(position)") }
                return .array(elements, open: false)
            case "\"":
                let start = position
                position += 1
                while let current, current != "\"" { position += current == "\\" ? 2 : 1 }
                position += 1
                let literal = String(String.UnicodeScalarView(text[start..<min(position, text.count)]))
                if literal.hasSuffix("…\"") {
                    let decoded = try JSONValue(parsing: Array((String(literal.dropLast(2)) + "\"").utf8))
                    return .prefix(decoded.stringValue ?? "")
                }
                return .value(try JSONValue(parsing: Array(literal.utf8)))
            default:
                let start = position
                while let current, !",]} \n".unicodeScalars.contains(current) { position += 1 }
                let literal = String(String.UnicodeScalarView(text[start..<position]))
                return .value(try JSONValue(parsing: Array(literal.utf8)))
            }
        }
    }
}
