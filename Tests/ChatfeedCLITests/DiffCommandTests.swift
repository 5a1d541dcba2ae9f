import Foundation
import JSONCodec
import ListDiff
import Testing
import TestSupport
import WireProtocol

@Suite("chatfeed diff")
struct DiffCommandTests {
    let directory: TemporaryDirectory

    init() throws { directory = try TemporaryDirectory() }

    func diff(_ old: String, _ new: String) throws -> BuiltExecutable.Outcome {
        let oldPath = try directory.write("old.json", old)
        let newPath = try directory.write("new.json", new)
        return try BuiltExecutable.run("chatfeed", ["diff", oldPath, newPath])
    }

    @Test("the seed's worked example, from id strings")
    func workedExample() throws {
        let outcome = try diff(#"["0","1","2","3","4","5","6"]"#, #"["1","2","4","5","6","10","11"]"#)
        #expect(outcome.status == 0 && outcome.stderr.isEmpty)
        #expect(outcome.stdout == #"{"batches":[{"deletes":[3,0],"inserts":[{"index":5,"id":"10"},{"index":6,"id":"11"}],"moves":[],"updates":[]}]}"# + "\n")
    }

    @Test("a move up and a deferred update, with revisions echoed")
    func moveAndUpdate() throws {
        let outcome = try diff(
            #"[{"id":"a","revision":1},{"id":"b","revision":1},{"id":"c","revision":1},{"id":"d","revision":1}]"#,
            #"[{"id":"d","revision":2},{"id":"a","revision":1},{"id":"b","revision":"x"},{"id":"c","revision":1}]"#)
        #expect(outcome.status == 0)
        #expect(outcome.stdout == #"{"batches":[{"deletes":[],"inserts":[],"moves":[{"from":3,"to":0}],"updates":[]},{"deletes":[],"inserts":[],"moves":[],"updates":[{"index":0,"id":"d","revision":2},{"index":2,"id":"b","revision":"x"}]}]}"# + "\n")
    }

    @Test("ten ids with the top one moved to the bottom: one move down")
    func topToBottom() throws {
        let ids = (0..<10).map { "\"\($0)\"" }
        let outcome = try diff("[" + ids.joined(separator: ",") + "]", "[" + (ids.dropFirst() + ids.prefix(1)).joined(separator: ",") + "]")
        #expect(outcome.status == 0)
        #expect(outcome.stdout == #"{"batches":[{"deletes":[],"inserts":[],"moves":[{"from":0,"to":9}],"updates":[]}]}"# + "\n")
    }

    @Test("equal lists print no batch")
    func unchanged() throws {
        let outcome = try diff(#"["a","b"]"#, #"["a","b"]"#)
        #expect(outcome.status == 0 && outcome.stdout == #"{"batches":[]}"# + "\n")
    }

    @Test("the printed batches turn OLD into NEW under the UIKit model")
    func appliesUnderUIKitModel() throws {
        var generator = SeededGenerator(seed: 7)
        let (old, new) = RandomLists.pair(count: 60, fraction: 0.2, using: &generator)
        func json(_ items: [TestItem]) -> String {
            "[" + items.map { #"{"id":"\#($0.id)","revision":\#($0.revision)}"# }.joined(separator: ",") + "]"
        }
        let outcome = try diff(json(old), json(new))
        #expect(outcome.status == 0)
        let printed = try JSONValue(parsing: outcome.stdout)
        var rows = old.map { "\($0.id)/\($0.revision)" }
        for batch in printed.objectValue?["batches"]?.arrayValue ?? [] {
            func indexed(_ key: String) -> [IndexedItem<String>] {
                (batch.objectValue?[key]?.arrayValue ?? []).map {
                    let object = $0.objectValue!
                    return IndexedItem(
                        index: Int(object["index"]!.int64Value!),
                        item: "\(object["id"]!.stringValue!)/\(object["revision"]!.int64Value!)")
                }
            }
            let parsed = Batch<String>(
                deletes: (batch.objectValue?["deletes"]?.arrayValue ?? []).map { Int($0.int64Value!) },
                inserts: indexed("inserts"),
                moves: (batch.objectValue?["moves"]?.arrayValue ?? []).map {
                    Move(from: Int($0.objectValue!["from"]!.int64Value!), to: Int($0.objectValue!["to"]!.int64Value!))
                },
                updates: indexed("updates"))
            rows = try UIKitBatchModel.apply(parsed, to: rows)
        }
        #expect(rows == new.map { "\($0.id)/\($0.revision)" })
    }

    @Test("standard input as -")
    func standardInput() throws {
        let newPath = try directory.write("new.json", #"["b","a"]"#)
        let outcome = try BuiltExecutable.run("chatfeed", ["diff", "-", newPath], stdin: #"["a","b"]"#)
        // b went up, so b moves (a stays).
        #expect(outcome.status == 0 && outcome.stdout.contains(#""moves":[{"from":1,"to":0}]"#))
    }

    @Test("bad input: one line on stderr naming the problem and the file, status 1", arguments: [
        (#"["a","a"]"#, #"["a"]"#, #"old.json: duplicate id "a" in the old list"#),
        (#"["a"]"#, #"[{"id":"b"},{"id":"b"}]"#, #"new.json: duplicate id "b" in the new list"#),
        (#"["a""#, #"[]"#, "old.json: malformed JSON"),
        (#"{"id":"a"}"#, #"[]"#, "old.json: expected a JSON array"),
        (#"[1]"#, #"[]"#, "old.json: item 0: expected an id string or an object"),
        (#"[]"#, #"[{"id":"a","rev":1}]"#, #"new.json: item 0: unknown key "rev""#),
        (#"[]"#, #"[{"revision":1}]"#, #"new.json: item 0: missing "id""#),
    ])
    func badInput(old: String, new: String, message: String) throws {
        let outcome = try diff(old, new)
        #expect(outcome.status == 1)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr.hasPrefix("chatfeed: error: ") && outcome.stderr.contains(message), "\(outcome.stderr)")
        #expect(outcome.stderr.split(separator: "\n").count == 1)
    }

    @Test("a missing file is named")
    func missingFile() throws {
        let outcome = try BuiltExecutable.run("chatfeed", ["diff", directory.path("nope.json"), directory.path("nope2.json")])
        #expect(outcome.status == 1 && outcome.stderr.contains("cannot read") && outcome.stderr.contains("nope.json"))
    }
}
