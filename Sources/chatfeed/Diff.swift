import ArgumentParser
import Foundation
import JSONCodec
import ListDiff
import WireProtocol

/// `chatfeed diff OLD.json NEW.json`: the blind diff of two lists (README, The CLI).
struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the UIKit batches that turn one list into another.",
        discussion: """
            Each file holds a JSON array of id strings or of {"id": …, "revision": …} objects; - reads \
            standard input. Prints {"batches":[…]}: a structural batch (deletes, inserts, the fewest \
            moves, upward-preferred), then a pure-update batch for the rows whose revision changed; [] when nothing changed.
            """)

    @Argument(help: ArgumentHelp("The list before.", valueName: "OLD.json")) var old: String
    @Argument(help: ArgumentHelp("The list after.", valueName: "NEW.json")) var new: String

    func validate() throws {
        if old == "-" && new == "-" { throw ValidationError("only one of OLD.json and NEW.json can be - (standard input)") }
    }

    func run() throws {
        let oldItems = try DiffInput.read(old)
        let newItems = try DiffInput.read(new)
        let result: ListDiffResult<DiffInput.Item>
        do {
            result = try ListDiffer.diff(from: oldItems, to: newItems)
        } catch {
            guard case .duplicateID(let id, let side) = error else { throw CLIFailure(message: "\(error)") }
            throw CLIFailure(message: "\(side == .old ? old : new): duplicate id \"\(id)\" in the \(side.rawValue) list")
        }
        let batches = result.batches.map { batch in
            JSONValue.object([
                "deletes": .array(batch.deletes.map(JSONValue.integer)),
                "inserts": .array(batch.inserts.map(\.jsonValue)),
                "moves": .array(batch.moves.map { .object(["from": .integer($0.from), "to": .integer($0.to)]) }),
                "updates": .array(batch.updates.map(\.jsonValue)),
            ])
        }
        output(JSONValue.object(["batches": .array(batches)]).description)
    }
}

/// Reading the lists of `chatfeed diff`.
enum DiffInput {
    /// An item of a diff input: an id, and a revision when the input gave one.
    struct Item: DiffableItem {
        var id: String
        var revision: JSONValue?
    }

    static func read(_ path: String) throws -> [Item] {
        let bytes: [UInt8]
        if path == "-" {
            bytes = Array(FileHandle.standardInput.readDataToEndOfFile())
        } else {
            // Read to the end rather than by size, so that pipes and FIFOs (`<(…)`) work.
            guard let handle = FileHandle(forReadingAtPath: path) else {
                let reason = FileManager.default.fileExists(atPath: path) ? "it cannot be read" : "no such file"
                throw CLIFailure(message: "cannot read '\(path)': \(reason)")
            }
            defer { try? handle.close() }
            do {
                bytes = Array(try handle.readToEnd() ?? Data())
            } catch {
                throw CLIFailure(message: "cannot read '\(path)': \(error.localizedDescription)")
            }
        }
        let name = path == "-" ? "standard input" : path
        let value: JSONValue
        do {
            value = try JSONValue(parsing: bytes)
        } catch {
            throw CLIFailure(message: "\(name): malformed JSON: \(error)")
        }
        guard case .array(let elements) = value else {
            throw CLIFailure(message: "\(name): expected a JSON array of ids or of {\"id\", \"revision\"} objects, found \(value.typeDescription)")
        }
        return try elements.enumerated().map { position, element in
            switch element {
            case .string(let id):
                return Item(id: id, revision: nil)
            case .object(let object):
                var id: String?
                var revision: JSONValue?
                for (key, value) in object.members {
                    switch key {
                    case "id":
                        guard case .string(let string) = value else {
                            throw CLIFailure(message: "\(name): item \(position): \"id\" must be a string, found \(value.typeDescription)")
                        }
                        id = string
                    case "revision":
                        revision = value
                    default:
                        throw CLIFailure(message: "\(name): item \(position): unknown key \"\(key)\" (items have \"id\" and \"revision\")")
                    }
                }
                guard let id else { throw CLIFailure(message: "\(name): item \(position): missing \"id\"") }
                return Item(id: id, revision: revision)
            default:
                throw CLIFailure(message: "\(name): item \(position): expected an id string or an object, found \(element.typeDescription)")
            }
        }
    }
}

extension IndexedItem where Item == DiffInput.Item {
    /// `{"index", "id", "revision"?}`: the revision only when the input had one.
    var jsonValue: JSONValue {
        var object: JSONObject = ["index": .integer(index), "id": .string(item.id)]
        if let revision = item.revision { object.append("revision", revision) }
        return .object(object)
    }
}
