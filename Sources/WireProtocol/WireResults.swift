import ChatModel
import JSONCodec

/// The `result` values of docs/PROTOCOL.md. Each has one encoder: `chats.locate`'s builds a JSON value,
/// the others write bytes (`appendChatsList`, `appendMessagesList`, `appendFeedSubscribe`, …).
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
}
