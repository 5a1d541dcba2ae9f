import ChatModel
import JSONCodec

// The decoders of the results clients read, beside their encoders: members they do not know are
// ignored; a missing or mistyped one is a `WireDecodingError` naming it.

extension WireResults {
    /// A write's chat result.
    public static func decodeChat(_ result: JSONValue) throws(WireDecodingError) -> Chat {
        try Chat(jsonValue: result, field: "result")
    }

    /// `user.create`: the user.
    public static func decodeUser(_ result: JSONValue) throws(WireDecodingError) -> User {
        try decoding { () throws(ChatError) in
            let reader = try ParamsReader(result: result, field: "")
            return User(id: try reader.string("id"), name: try reader.string("name"), createdAt: try reader.int64("createdAt"))
        }
    }

    /// `chat.members`: the members' user ids.
    public static func decodeMembers(_ result: JSONValue) throws(WireDecodingError) -> [String] {
        try decoding { () throws(ChatError) in
            try ParamsReader(result: result, field: "").stringArray("members", count: 0...Int.max)
        }
    }

    /// `message.post`: whether the message was already there (`duplicate`).
    public static func decodePost(_ result: JSONValue) throws(WireDecodingError) -> Bool {
        try decoding { () throws(ChatError) in try ParamsReader(result: result, field: "").bool("duplicate") }
    }

    /// `chats.list`: `{"total","unread","items"}` (`unread` absent: zero).
    public static func decodeChatsList(
        _ result: JSONValue
    ) throws(WireDecodingError) -> (total: Int, unread: UnreadCounters, items: [Chat]) {
        try decoding { () throws(ChatError) in
            let reader = try ParamsReader(result: result, field: "")
            // An engine older than the unread counters sends none: zero.
            var unread = UnreadCounters()
            if let value = reader.object["unread"], value != .null { unread = try UnreadCounters(decoding: value) }
            return (try reader.int("total", in: 0...Int.max), unread, try chats(reader, "items"))
        }
    }

    /// `chats.locate`: `{"total","indices":{id: index or null}}`; ids not in the list are left out.
    public static func decodeChatsLocate(_ result: JSONValue) throws(WireDecodingError) -> (total: Int, indices: [String: Int]) {
        try decoding { () throws(ChatError) in
            let reader = try ParamsReader(result: result, field: "")
            guard case .object(let object)? = reader.object["indices"] else {
                throw .invalidParams(field: "indices", reason: "is required (an object)")
            }
            var indices: [String: Int] = [:]
            for (id, index) in object { if let index = index.int64Value { indices[id] = Int(index) } }
            return (try reader.int("total", in: 0...Int.max), indices)
        }
    }

    /// `messages.list`: `{"items","nextCursor"}`.
    public static func decodeMessagesList(_ result: JSONValue) throws(WireDecodingError) -> (items: [Message], nextCursor: String?) {
        try decoding { () throws(ChatError) in
            let reader = try ParamsReader(result: result, field: "")
            guard case .array(let elements)? = reader.object["items"] else {
                throw .invalidParams(field: "items", reason: "is required (an array)")
            }
            var items: [Message] = []
            for (position, element) in elements.enumerated() {
                items.append(try Message(decoding: element, field: "items[\(position)]"))
            }
            return (items, try reader.optionalString("nextCursor"))
        }
    }

    private static func chats(_ reader: ParamsReader, _ key: String) throws(ChatError) -> [Chat] {
        guard case .array(let elements)? = reader.object[key] else {
            throw .invalidParams(field: key, reason: "is required (an array)")
        }
        var chats: [Chat] = []
        chats.reserveCapacity(elements.count)
        for (position, element) in elements.enumerated() {
            chats.append(try Chat(decoding: element, field: "\(key)[\(position)]"))
        }
        return chats
    }

    private static func decoding<T>(_ body: () throws(ChatError) -> T) throws(WireDecodingError) -> T {
        do { return try body() } catch { throw WireDecodingError(error) }
    }
}
