import ArgumentParser
import ChatModel
import WireProtocol

struct Locate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Show the index of chats in the chat list.")

    @Argument(help: "Chat ids.") var ids: [String]
    @Option(help: "The list: main or archive.") var list = ChatList.main
    @Flag(help: "Print the chats.locate result as JSON.") var json = false
    @OptionGroup var acting: ActingUserOption
    @OptionGroup var store: StoreSelection
    @OptionGroup var access: ReadOnlyOption

    func validate() throws {
        if ids.isEmpty { throw ValidationError("give at least one chat id") }
    }

    func run() throws {
        let user = try acting.resolve(store)
        let opened = try store.openStore(actingAs: user, readOnly: access.readOnly)
        let (total, positions) = try reportingFailures {
            (try opened.listSize(of: list, user: user), try opened.positions(of: ids, in: list, user: user))
        }
        if json {
            output(WireResults.chatsLocate(total: total, indices: ids.map { ($0, positions[$0] ?? nil) }).description)
            return
        }
        var table = TextTable(headers: ["CHAT", "INDEX"])
        for id in ids {
            table.append([id, (positions[id] ?? nil).map(String.init) ?? "not found"])
        }
        output(table.render())
    }
}
