import ChatModel
import JSONCodec

/// The `result` values and notification params of SPEC §5, with their exact keys.
public enum WireResults {
    /// `chats.list`: `{"total","items":[chat]}`
    public static func chatsList(total: Int, items: [Chat]) -> JSONValue {
        .object(["total": .integer(total), "items": .array(items.map(\.jsonValue))])
    }

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

    /// `messages.list`: `{"items":[message]}`, newest first as given.
    public static func messagesList(items: [Message]) -> JSONValue {
        .object(["items": .array(items.map(\.jsonValue))])
    }

    /// `feed.subscribe`: `{"subscription","seq":0,"total","items":[chat]}`
    public static func feedSubscribe(subscription: String, total: Int, items: [Chat]) -> JSONValue {
        .object([
            "subscription": .string(subscription), "seq": .integer(0), "total": .integer(total),
            "items": .array(items.map(\.jsonValue)),
        ])
    }

    /// Params of the `feed.batch` notification: `subscription`, `seq`, `count`, `total`, then the
    /// batch fields of SPEC §3.
    public static func feedBatch(
        subscription: String, seq: Int64, count: Int, total: Int,
        deletes: [Int], inserts: [(index: Int, chat: Chat)], moves: [(from: Int, to: Int)],
        updates: [(index: Int, chat: Chat)]
    ) -> JSONValue {
        .object([
            "subscription": .string(subscription), "seq": .integer(seq), "count": .integer(count),
            "total": .integer(total),
            "deletes": .array(deletes.map(JSONValue.integer)),
            "inserts": .array(inserts.map { .object(["index": .integer($0.index), "chat": $0.chat.jsonValue]) }),
            "moves": .array(moves.map { .object(["from": .integer($0.from), "to": .integer($0.to)]) }),
            "updates": .array(updates.map { .object(["index": .integer($0.index), "chat": $0.chat.jsonValue]) }),
        ])
    }

    /// Params of the `feed.reset` notification: `{"subscription","seq","count","total","items"}`.
    public static func feedReset(subscription: String, seq: Int64, count: Int, total: Int, items: [Chat]) -> JSONValue {
        .object([
            "subscription": .string(subscription), "seq": .integer(seq), "count": .integer(count),
            "total": .integer(total), "items": .array(items.map(\.jsonValue)),
        ])
    }
}
