import ArgumentParser
import JSONCodec
import WireProtocol
import ChatStore

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show counts and the latest change sequence.")

    @Flag(help: "Print as JSON.") var json = false
    @OptionGroup var store: StoreSelection
    @OptionGroup var access: ReadOnlyOption

    func run() throws {
        let opened = try store.openStore(readOnly: access.readOnly)
        let stats = try reportingFailures { try opened.stats() }
        if json {
            let object: JSONValue = .object([
                "chats": .integer(stats.chats), "messages": .integer(stats.messages),
                "latestChangeSequence": .integer(stats.latestChangeSequence),
            ])
            output(object.description)
        } else {
            output("chats: \(stats.chats)\nmessages: \(stats.messages)\nlatest change: \(stats.latestChangeSequence)")
        }
    }
}
