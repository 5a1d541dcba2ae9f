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

extension WireResults {
    /// `user.create`: the user, `{"id","name","createdAt"}`.
    public static func user(_ user: User) -> JSONValue {
        .object(["id": .string(user.id), "name": .string(user.name), "createdAt": .integer(user.createdAt)])
    }

    /// `chat.members`: `{"members":[user id]}`, by id.
    public static func chatMembers(_ members: [String]) -> JSONValue {
        .object(["members": .array(members.map(JSONValue.string))])
    }

    /// The result of a committed write: as `EventResult.appendJSON(to:)` writes it, except
    /// `user.create`'s, which is the user created.
    public static func appendWriteResult(_ result: EventResult, of event: ChatEvent, to output: inout [UInt8]) {
        if case .createUser(let id, let name, let createdAt) = event {
            output.append(contentsOf: user(User(id: id, name: name, createdAt: createdAt)).serialized())
        } else {
            result.appendJSON(to: &output)
        }
    }
}
