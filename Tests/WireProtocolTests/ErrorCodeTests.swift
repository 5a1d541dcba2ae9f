import Foundation
import Testing
import WireProtocol

/// One error-code type: every code docs/PROTOCOL.md lists has a name, and names match in `switch`.
@Suite struct ErrorCodeTests {
    @Test func everyDocumentedCodeHasAName() throws {
        var path = #filePath
        for _ in 0..<3 { path = String(path[..<path.lastIndex(of: "/")!]) }
        let text = try String(contentsOfFile: path + "/docs/PROTOCOL.md", encoding: .utf8)
        let documented = text.split(separator: "\n").compactMap { line -> Int? in
            guard line.hasPrefix("| −3") else { return nil }
            let number = line.dropFirst(3).prefix { $0.isNumber }
            return Int(number).map { -$0 }
        }
        #expect(documented.count >= 12)
        #expect(Set(documented) == Set(RPCErrorCode.allNamed.map(\.rawValue)))
    }

    @Test func codesMatchByName() {
        func name(_ code: RPCErrorCode) -> String {
            switch code {
            case .notFound: "not found"
            case .storageFull: "storage full"
            case .forbidden: "forbidden"
            default: "other \(code)"
            }
        }
        #expect(name(RPCError(code: -32001, message: "").code) == "not found")
        #expect(name(-32004) == "storage full")
        #expect(name(-32007) == "forbidden")
        #expect(name(-32099) == "other -32099")
        #expect(RPCError(.notFound(kind: "chat", id: "a")).code == .notFound)
    }
}
