import ArgumentParser
import JSONCodec
import WireProtocol
import ChatStore

struct Stats: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show counts (users, memberships, chats, messages) and the latest change sequence.")

    @Flag(help: "Print as JSON.") var json = false
    @OptionGroup var store: StoreSelection
    @OptionGroup var access: ReadOnlyOption

    func run() throws {
        let opened = try store.openStore(readOnly: access.readOnly)
        let (stats, people) = try reportingFailures { (try opened.stats(), try opened.userCounts()) }
        if json {
            let object: JSONValue = .object([
                "users": .integer(people.users), "memberships": .integer(people.memberships),
                "chats": .integer(stats.chats), "messages": .integer(stats.messages),
                "latestChangeSequence": .integer(stats.latestChangeSequence),
            ])
            output(object.description)
        } else {
            output("""
                users: \(people.users)
                memberships: \(people.memberships)
                chats: \(stats.chats)
                messages: \(stats.messages)
                latest change: \(stats.latestChangeSequence)
                """)
        }
    }
}
