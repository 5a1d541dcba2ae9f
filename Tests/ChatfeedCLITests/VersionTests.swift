import WireProtocol
import Foundation
import Testing
import TestSupport

@Suite("--version")
struct VersionTests {
    @Test("both executables print the one version", arguments: ["chatfeed", "chatfeedd"])
    func version(executable: String) throws {
        let outcome = try BuiltExecutable.run(executable, ["--version"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout == ChatfeedVersion.current + "\n")
    }

    /// The newest release: changes not released yet sit above it under `## Unreleased`.
    @Test("the version is the newest release of CHANGELOG.md")
    func changelog() throws {
        let text = try String(contentsOf: BuiltExecutable.packageRoot.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = text.split(separator: "\n").first { $0.hasPrefix("## ") && $0 != "## Unreleased" }
        #expect(newest?.hasPrefix("## \(ChatfeedVersion.current) ") == true, "\(newest ?? "no release in CHANGELOG.md")")
    }
}
