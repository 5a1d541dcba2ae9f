import ChatModel
import JSONCodec

/// The `result` values of SPEC §5 built as JSON values (the larger ones are written straight to
/// bytes: `appendChatsList`, `appendFeedSubscribe`, …).
public enum WireResults {
    /// `chats.locate`: `{"total","indices":{id: index or null}}`, in the order of `indices`
    /// (a repeated id appears once).
    public static func chatsLocate(total: Int, indices: [(id: String, index: Int?)]) -> JSONValue {
        var object = JSONObject()
        object.reserveCapacity(indices.count)
        var seen = Set<String>(minimumCapacity: indices.count)
        for entry in indices where seen.insert(entry.id).inserted {
            object.append(entry.id, entry.index.map(JSONValue.integer) ?? .null)
        }
        return .object(["total": .integer(total), "indices": .object(object)])
    }

    /// `messages.list`: `{"items":[message],"nextCursor"}`, newest first as given; `nextCursor`
    /// continues `chat`'s listing after the page (null on the last page).
    public static func messagesList(chat: String, page: MessagePage) -> JSONValue {
        .object([
            "items": .array(page.items.map(\.jsonValue)),
            "nextCursor": page.next.map { .string(MessageCursor.encode(chat: chat, after: $0)) } ?? .null,
        ])
    }
}
