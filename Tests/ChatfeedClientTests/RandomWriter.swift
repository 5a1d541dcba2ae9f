import ChatfeedClient
import ChatModel
import TestSupport

/// Random writes through the client's typed calls, chosen so that each must succeed: new chats
/// (some created in the past), messages that bump a chat, late messages, edits, deleted (last)
/// messages, renames, reads, removed chats.
struct RandomWriter {
    private var chats: [String] = []
    private var messages: [(id: String, chat: String)] = []
    private var next = 0
    private var clock: Int64 = 1_000_000

    mutating func write(to client: ChatfeedClient, using generator: inout SeededGenerator) async throws {
        next += 1
        clock += Int64.random(in: 1...5, using: &generator)
        let roll = Int.random(in: 0..<100, using: &generator)
        if chats.count < 4 || roll < 10 {
            let id = "c\(next)"
            let createdAt = roll % 2 == 0 ? clock : clock - Int64.random(in: 0...5_000, using: &generator)
            try await client.createChat(id, title: roll % 3 == 0 ? "日本語のチャット \(next) 🎉" : "chat \(next)", createdAt: createdAt)
            chats.append(id)
            return
        }
        let chat = chats.randomElement(using: &generator)!
        switch roll {
        case ..<55:
            let late = roll < 16
            let id = "m\(next)"
            let sentAt = late ? clock - Int64.random(in: 100...10_000, using: &generator) : clock
            let result = try await client.postMessage(chat: chat, id: id, sender: "ann", text: "hello \(next)", sentAt: sentAt)
            precondition(!result.duplicate)
            messages.append((id, chat))
        case ..<63 where !messages.isEmpty:
            try await client.editMessage(messages.randomElement(using: &generator)!.id, text: "edited \(next)")
        case ..<73 where !messages.isEmpty:
            let index = Int.random(in: messages.indices, using: &generator)
            try await client.deleteMessage(messages.remove(at: index).id)
        case ..<82:
            try await client.renameChat(chat, title: "renamed \(next)")
        case ..<95:
            try await client.markChatRead(chat)
        default:
            try await client.removeChat(chat)
            chats.removeAll { $0 == chat }
            messages.removeAll { $0.chat == chat }
        }
    }
}
