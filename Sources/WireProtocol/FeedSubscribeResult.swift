import ChatModel
import JSONCodec
import ListDiff

/// The result of `feed.subscribe`: the subscription, and either the list (`items`) or, for a
/// subscribe with `known`, the batches that take the client's rows to it (docs/PROTOCOL.md, The live feed).
public struct FeedSubscribeResult: Hashable, Sendable {
    public enum Content: Hashable, Sendable {
        /// Reload the table with these rows.
        case items([Chat])
        /// Apply these batches (none, one, or a structural batch and its deferred updates).
        case batches([Batch<Chat>])
    }

    public var subscription: String
    /// Rows in the subscription's list.
    public var count: Int
    /// Chats in the subscription's list (whatever the window and filter).
    public var total: Int
    /// The counters of the subscription's list.
    public var unread: UnreadCounters
    public var content: Content

    public init(
        subscription: String, count: Int? = nil, total: Int, unread: UnreadCounters = UnreadCounters(), content: Content
    ) {
        self.subscription = subscription
        if let count {
            self.count = count
        } else if case .items(let items) = content {
            self.count = items.count
        } else {
            self.count = total
        }
        self.total = total
        self.unread = unread
        self.content = content
    }

    /// Decodes a result as the engine writes it; unknown keys are ignored, so that a client keeps
    /// working when the engine adds fields; a missing or mistyped one is a `WireDecodingError`
    /// that names it.
    /// The `subscription` of a subscribe result that may not decode as a whole (a client ends a
    /// subscription it refuses or no longer waits for); nil when it has none.
    public static func subscriptionID(in result: JSONValue) -> String? {
        result["subscription"]?.stringValue
    }

    public init(jsonValue: JSONValue) throws(WireDecodingError) {
        do { self = try FeedSubscribeResult(decoding: jsonValue) } catch { throw WireDecodingError(error) }
    }

    private init(decoding jsonValue: JSONValue) throws(ChatError) {
        guard case .object(let object) = jsonValue else {
            throw .invalidParams(field: "result", reason: "must be an object, not \(jsonValue.typeDescription)")
        }
        guard let subscription = object["subscription"]?.stringValue else {
            throw .invalidParams(field: "subscription", reason: "is required (a string)")
        }
        self.subscription = subscription
        let reader = try ParamsReader(result: jsonValue, field: "")
        total = try reader.int("total", in: 0...Int.max)
        unread = try object["unread"].map { value throws(ChatError) in try UnreadCounters(decoding: value) } ?? UnreadCounters()
        if let batches = object["batches"], batches != .null {
            guard case .array(let elements) = batches else {
                throw .invalidParams(field: "batches", reason: "must be an array of batches")
            }
            var decoded: [Batch<Chat>] = []
            for (position, element) in elements.enumerated() {
                decoded.append(try Batch(decoding: element, field: "batches[\(position)]"))
            }
            content = .batches(decoded)
        } else {
            guard case .array(let elements)? = object["items"] else {
                throw .invalidParams(field: "items", reason: "is required (an array of chats) when there are no batches")
            }
            var items: [Chat] = []
            items.reserveCapacity(elements.count)
            for (position, element) in elements.enumerated() {
                items.append(try Chat(decoding: element, field: "items[\(position)]"))
            }
            content = .items(items)
        }
        if let count = object["count"]?.int64Value {
            self.count = Int(count)
        } else if case .items(let items) = content {
            count = items.count
        } else {
            count = total
        }
    }
}

extension Batch<Chat> {
    /// Decodes `{"deletes","inserts","moves","updates"}` (all four required), as in a subscribe
    /// result's `batches`; members it does not know are ignored.
    public init(jsonValue: JSONValue, field: String) throws(WireDecodingError) {
        do { self = try Batch(decoding: jsonValue, field: field) } catch { throw WireDecodingError(error) }
    }

    init(decoding jsonValue: JSONValue, field: String) throws(ChatError) {
        let reader = try ParamsReader(result: jsonValue, field: field)
        func array(_ key: String) throws(ChatError) -> [JSONValue] {
            guard case .array(let elements)? = reader.object[key] else {
                throw .invalidParams(field: reader.path(key), reason: "is required (an array)")
            }
            return elements
        }
        func indexedChats(_ key: String) throws(ChatError) -> [IndexedItem<Chat>] {
            var result: [IndexedItem<Chat>] = []
            for (position, element) in try array(key).enumerated() {
                let item = try ParamsReader(result: element, field: "\(reader.path(key))[\(position)]")
                guard let chat = item.object["chat"] else { throw .invalidParams(field: item.path("chat"), reason: "is required") }
                result.append(IndexedItem(
                    index: try item.int("index", in: 0...Int.max), item: try Chat(decoding: chat, field: item.path("chat"))))
            }
            return result
        }
        var deletes: [Int] = []
        for (position, element) in try array("deletes").enumerated() {
            guard let index = element.int64Value, index >= 0 else {
                throw .invalidParams(field: "\(reader.path("deletes"))[\(position)]", reason: "must be an index (an integer ≥ 0)")
            }
            deletes.append(Int(index))
        }
        var moves: [Move] = []
        for (position, element) in try array("moves").enumerated() {
            let move = try ParamsReader(result: element, field: "\(reader.path("moves"))[\(position)]")
            moves.append(Move(from: try move.int("from", in: 0...Int.max), to: try move.int("to", in: 0...Int.max)))
        }
        self.init(deletes: deletes, inserts: try indexedChats("inserts"), moves: moves, updates: try indexedChats("updates"))
    }

    /// Appends `{"deletes","inserts","moves","updates"}`, all four always present.
    public func appendJSON(to output: inout [UInt8]) {
        var cache = ChatJSONCache()
        appendJSON(to: &output, cache: &cache)
    }

    /// `appendJSON(to:)`, the chats' shared members from `cache` when it holds them.
    public func appendJSON(to output: inout [UInt8], cache: inout ChatJSONCache) {
        output.append(contentsOf: #"{"deletes":["#.utf8)
        for (position, index) in deletes.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            JSONOutput.appendInteger(Int64(index), to: &output)
        }
        output.append(contentsOf: #"],"inserts":"#.utf8)
        Self.appendIndexedChats(inserts, to: &output, cache: &cache)
        output.append(contentsOf: #","moves":["#.utf8)
        for (position, move) in moves.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: #"{"from":"#.utf8)
            JSONOutput.appendInteger(Int64(move.from), to: &output)
            output.append(contentsOf: #","to":"#.utf8)
            JSONOutput.appendInteger(Int64(move.to), to: &output)
            output.append(UInt8(ascii: "}"))
        }
        output.append(contentsOf: #"],"updates":"#.utf8)
        Self.appendIndexedChats(updates, to: &output, cache: &cache)
        output.append(UInt8(ascii: "}"))
    }

    private static func appendIndexedChats(_ rows: [IndexedItem<Chat>], to output: inout [UInt8], cache: inout ChatJSONCache) {
        output.append(UInt8(ascii: "["))
        for (position, row) in rows.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: #"{"index":"#.utf8)
            JSONOutput.appendInteger(Int64(row.index), to: &output)
            output.append(contentsOf: #","chat":"#.utf8)
            row.item.appendJSON(to: &output, cache: &cache)
            output.append(UInt8(ascii: "}"))
        }
        output.append(UInt8(ascii: "]"))
    }
}

extension WireResults {
    /// Appends the `feed.subscribe` result of a resume:
    /// `{"subscription","seq":0,"count","total","unread","batches":[…]}`; `count` is the rows after
    /// the batches. Every field is required, so that no caller (a benchmark) writes less than the daemon.
    public static func appendFeedSubscribe(
        subscription: String, count: Int, total: Int, unread: UnreadCounters,
        batches: [Batch<Chat>], to output: inout [UInt8]
    ) {
        output.append(contentsOf: #"{"subscription":"#.utf8)
        JSONOutput.appendString(subscription, to: &output)
        output.append(contentsOf: #","seq":0,"count":"#.utf8)
        JSONOutput.appendInteger(Int64(count), to: &output)
        output.append(contentsOf: #","total":"#.utf8)
        JSONOutput.appendInteger(Int64(total), to: &output)
        output.append(contentsOf: #","unread":"#.utf8)
        unread.appendJSON(to: &output)
        output.append(contentsOf: #","batches":["#.utf8)
        for (position, batch) in batches.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            batch.appendJSON(to: &output)
        }
        output.append(contentsOf: "]}".utf8)
    }
}
