import ChatModel
import JSONCodec

// Direct writers: the same bytes as `jsonValue.serialize(into:)`, without building a JSONValue
// (for snapshots of large lists and for every batch).

extension LastMessage {
    /// Appends the JSON of `jsonValue` to `output`.
    public func appendJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONOutput.appendString(id, to: &output)
        output.append(contentsOf: #","sender":"#.utf8)
        JSONOutput.appendString(sender, to: &output)
        output.append(contentsOf: #","text":"#.utf8)
        JSONOutput.appendString(text, to: &output)
        output.append(contentsOf: #","sentAt":"#.utf8)
        JSONOutput.appendInteger(sentAt, to: &output)
        output.append(UInt8(ascii: "}"))
    }
}

extension Chat {
    /// Appends the JSON of `jsonValue` to `output`.
    public func appendJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONOutput.appendString(id, to: &output)
        output.append(contentsOf: #","title":"#.utf8)
        JSONOutput.appendString(title, to: &output)
        output.append(contentsOf: #","createdAt":"#.utf8)
        JSONOutput.appendInteger(createdAt, to: &output)
        output.append(contentsOf: #","lastMessage":"#.utf8)
        if let lastMessage {
            lastMessage.appendJSON(to: &output)
        } else {
            output.append(contentsOf: "null".utf8)
        }
        output.append(contentsOf: #","lastMessageDate":"#.utf8)
        JSONOutput.appendInteger(lastMessageDate, to: &output)
        output.append(contentsOf: #","unread":"#.utf8)
        JSONOutput.appendInteger(unread, to: &output)
        output.append(contentsOf: #","revision":"#.utf8)
        JSONOutput.appendInteger(revision, to: &output)
        output.append(UInt8(ascii: "}"))
    }
}

extension Message {
    /// Appends the JSON of `jsonValue` to `output`.
    public func appendJSON(to output: inout [UInt8]) {
        output.append(contentsOf: #"{"id":"#.utf8)
        JSONOutput.appendString(id, to: &output)
        output.append(contentsOf: #","chat":"#.utf8)
        JSONOutput.appendString(chat, to: &output)
        output.append(contentsOf: #","sender":"#.utf8)
        JSONOutput.appendString(sender, to: &output)
        output.append(contentsOf: #","text":"#.utf8)
        JSONOutput.appendString(text, to: &output)
        output.append(contentsOf: #","sentAt":"#.utf8)
        JSONOutput.appendInteger(sentAt, to: &output)
        output.append(contentsOf: #","editedAt":"#.utf8)
        if let editedAt {
            JSONOutput.appendInteger(editedAt, to: &output)
        } else {
            output.append(contentsOf: "null".utf8)
        }
        output.append(UInt8(ascii: "}"))
    }
}

extension RPCMessage {
    /// A result response whose `result` is written by `writeResult` (which must append exactly
    /// one JSON value).
    @inlinable
    public static func appendResultResponse(
        id: JSONValue, to output: inout [UInt8], writeResult: (inout [UInt8]) -> Void
    ) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","id":"#.utf8)
        id.serialize(into: &output)
        output.append(contentsOf: #","result":"#.utf8)
        writeResult(&output)
        output.append(contentsOf: "}\n".utf8)
    }

    /// A notification whose `params` are written by `writeParams` (exactly one JSON value).
    @inlinable
    public static func appendNotification(
        method: String, to output: inout [UInt8], writeParams: (inout [UInt8]) -> Void
    ) {
        output.append(contentsOf: #"{"jsonrpc":"2.0","method":"#.utf8)
        JSONOutput.appendString(method, to: &output)
        output.append(contentsOf: #","params":"#.utf8)
        writeParams(&output)
        output.append(contentsOf: "}\n".utf8)
    }
}

extension WireResults {
    /// Appends `[chat,…]`.
    @inlinable
    public static func appendChats(_ chats: some Sequence<Chat>, to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        var first = true
        for chat in chats {
            if !first { output.append(UInt8(ascii: ",")) }
            first = false
            chat.appendJSON(to: &output)
        }
        output.append(UInt8(ascii: "]"))
    }

    /// Appends the `chats.list` result (same bytes as `chatsList(total:items:)`).
    @inlinable
    public static func appendChatsList(total: Int, items: some Sequence<Chat>, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"total":"#.utf8)
        JSONOutput.appendInteger(Int64(total), to: &output)
        output.append(contentsOf: #","items":"#.utf8)
        appendChats(items, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// Appends the `feed.subscribe` result (same bytes as `feedSubscribe(subscription:total:items:)`).
    @inlinable
    public static func appendFeedSubscribe(
        subscription: String, total: Int, items: some Sequence<Chat>, to output: inout [UInt8]
    ) {
        output.append(contentsOf: #"{"subscription":"#.utf8)
        JSONOutput.appendString(subscription, to: &output)
        output.append(contentsOf: #","seq":0,"total":"#.utf8)
        JSONOutput.appendInteger(Int64(total), to: &output)
        output.append(contentsOf: #","items":"#.utf8)
        appendChats(items, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// Appends `feed.reset` params (same bytes as `feedReset(subscription:seq:count:total:items:)`).
    @inlinable
    public static func appendFeedReset(
        subscription: String, seq: Int64, count: Int, total: Int, items: some Sequence<Chat>,
        to output: inout [UInt8]
    ) {
        appendFeedHeader(subscription: subscription, seq: seq, count: count, total: total, to: &output)
        output.append(contentsOf: #","items":"#.utf8)
        appendChats(items, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    /// Appends `feed.batch` params (same bytes as `FeedBatchParams.jsonValue`).
    public static func appendFeedBatch(_ batch: FeedBatchParams, to output: inout [UInt8]) {
        appendFeedHeader(subscription: batch.subscription, seq: batch.seq, count: batch.count, total: batch.total, to: &output)
        output.append(contentsOf: #","deletes":["#.utf8)
        for (position, index) in batch.deletes.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            JSONOutput.appendInteger(Int64(index), to: &output)
        }
        output.append(contentsOf: #"],"inserts":"#.utf8)
        appendIndexedChats(batch.inserts, to: &output)
        output.append(contentsOf: #","moves":["#.utf8)
        for (position, move) in batch.moves.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: #"{"from":"#.utf8)
            JSONOutput.appendInteger(Int64(move.from), to: &output)
            output.append(contentsOf: #","to":"#.utf8)
            JSONOutput.appendInteger(Int64(move.to), to: &output)
            output.append(UInt8(ascii: "}"))
        }
        output.append(contentsOf: #"],"updates":"#.utf8)
        appendIndexedChats(batch.updates, to: &output)
        output.append(UInt8(ascii: "}"))
    }

    @usableFromInline
    static func appendFeedHeader(subscription: String, seq: Int64, count: Int, total: Int, to output: inout [UInt8]) {
        output.append(contentsOf: #"{"subscription":"#.utf8)
        JSONOutput.appendString(subscription, to: &output)
        output.append(contentsOf: #","seq":"#.utf8)
        JSONOutput.appendInteger(seq, to: &output)
        output.append(contentsOf: #","count":"#.utf8)
        JSONOutput.appendInteger(Int64(count), to: &output)
        output.append(contentsOf: #","total":"#.utf8)
        JSONOutput.appendInteger(Int64(total), to: &output)
    }

    private static func appendIndexedChats(_ rows: [WireIndexedChat], to output: inout [UInt8]) {
        output.append(UInt8(ascii: "["))
        for (position, row) in rows.enumerated() {
            if position > 0 { output.append(UInt8(ascii: ",")) }
            output.append(contentsOf: #"{"index":"#.utf8)
            JSONOutput.appendInteger(Int64(row.index), to: &output)
            output.append(contentsOf: #","chat":"#.utf8)
            row.chat.appendJSON(to: &output)
            output.append(UInt8(ascii: "}"))
        }
        output.append(UInt8(ascii: "]"))
    }
}
