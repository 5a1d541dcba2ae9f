// What an app names next to `ChatClient` — `Chat`, `LastMessage`, `Message`, `ChatList`,
// `UnreadCounters` (ChatModel) and `Batch`, `Move`, `IndexedItem` (ListDiff, in `FeedStep`) — is
// importable from `ChatfeedClient` alone. Re-exported whole rather than through typealiases: the
// types keep one name and come with their extensions and conformances (`chat.pinned`,
// `Chat: Codable`), and a type added to those modules needs no alias here.
@_exported import ChatModel
@_exported import ListDiff
