import ChatModel
import ChatStore

/// The id of a seeded store's `i`-th chat: "chat-000042".
public func seededChatID(_ i: Int) -> String {
    let digits = String(i)
    return "chat-" + String(repeating: "0", count: max(0, 6 - digits.count)) + digits
}

/// The date of a seeded store's chats and of their one message each.
public let seededDate: Int64 = 1_700_000_000_000

/// Adds `count` chats (`seededChatID(0)`…) to `store`, each with one message from "ann" so that
/// the chats order by their last message, in group commits of 10,000, then empties the log.
public func seedChats(_ count: Int, into store: ChatDatabase) throws {
    var start = 0
    while start < count {
        let end = min(start + 10_000, count)
        var events: [ChatEvent] = []
        for i in start..<end {
            let id = seededChatID(i)
            events.append(.createChat(id: id, title: "Chat \(i)", createdAt: seededDate))
            events.append(.postMessage(Message(
                id: "seed-\(i)", chat: id, sender: "ann", text: "hello", sentAt: seededDate + Int64(i))))
        }
        for result in try store.apply(events) { _ = try result.get() }
        start = end
    }
    _ = try store.checkpoint(truncate: true)
}
