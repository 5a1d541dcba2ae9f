import Foundation
import ListDiff
import Testing

/// The batch cases that the Swift and the browser test suites share (Tests/Fixtures/batch-cases.json):
/// each one is checked here against `UIKitBatchModel`, so that the data cannot drift from the Swift
/// rules; Tests/Browser runs the same file through Web/listmodel.js in Chromium.
@Suite("Shared batch cases (Tests/Fixtures/batch-cases.json)")
struct SharedBatchCaseTests {
    struct Row: Codable, Hashable, CustomStringConvertible {
        var id: String
        var revision: Int
        var description: String { "\(id)@\(revision)" }
    }

    struct WireBatch: Codable {
        struct Indexed: Codable { var index: Int; var chat: Row }
        struct WireMove: Codable { var from: Int; var to: Int }
        var deletes: [Int]
        var inserts: [Indexed]
        var moves: [WireMove]
        var updates: [Indexed]

        var batch: Batch<Row> {
            Batch(
                deletes: deletes,
                inserts: inserts.map { IndexedItem(index: $0.index, item: $0.chat) },
                moves: moves.map { Move(from: $0.from, to: $0.to) },
                updates: updates.map { IndexedItem(index: $0.index, item: $0.chat) })
        }
    }

    struct Refusal: Codable { var batch: Int; var rule: String }

    struct Case: Codable, CustomTestStringConvertible {
        var name: String
        var rows: [Row]
        var batches: [WireBatch]
        var after: [Row]?
        var error: Refusal?
        var testDescription: String { name }
    }

    struct File: Codable { var about: String; var cases: [Case] }

    static let cases: [Case] = {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Fixtures/batch-cases.json")
        do {
            return try JSONDecoder().decode(File.self, from: Data(contentsOf: url)).cases
        } catch {
            Issue.record("cannot read \(url.path): \(error)")
            return []
        }
    }()

    /// The rule named by its Swift case name, as the file spells it.
    static func rule(named name: String) -> BatchRule? {
        BatchRule.allCases.first { String(describing: $0) == name }
    }

    @Test("UIKitBatchModel does what each case says", arguments: cases)
    func runsThroughUIKitBatchModel(_ testCase: Case) throws {
        #expect((testCase.after == nil) != (testCase.error == nil), "a case has either 'after' or 'error'")
        var list = testCase.rows
        for (position, wire) in testCase.batches.enumerated() {
            do {
                list = try UIKitBatchModel.apply(wire.batch, to: list)
                #expect(testCase.error?.batch != position, "batch \(position) applied; the case expects it refused")
            } catch {
                let expected = try #require(testCase.error, "batch \(position) refused: \(error)")
                #expect(expected.batch == position, "batch \(position) refused: \(error)")
                #expect(String(describing: error.rule) == expected.rule, "\(error)")
                return
            }
        }
        #expect(list == testCase.after, "ended at \(list)")
    }

    @Test("the file names only rules that exist, covers every rule, and names each case once")
    func fileIsWellFormed() {
        #expect(Self.cases.count >= 40)
        let named = Self.cases.compactMap(\.error?.rule)
        for name in named { #expect(Self.rule(named: name) != nil, "no BatchRule '\(name)'") }
        #expect(Set(named.compactMap(Self.rule(named:))) == Set(BatchRule.allCases))
        #expect(Set(Self.cases.map(\.name)).count == Self.cases.count)
    }
}
