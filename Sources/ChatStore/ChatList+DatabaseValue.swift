import CSQLite
import ChatModel
import SQLite

/// A chat list in a `list` column: its name (`main`, `archive`). A name other than `archive`
/// reads as `main`, the list a chat goes to.
///
/// Read from the column's bytes: a load of 1,000,000 chats made a `String` of each row's list
/// name and matched it against the cases, a tenth of the load's own work.
extension ChatList: DatabaseValueConvertible {
    public func bind(to statement: OpaquePointer, at index: Int32) -> Int32 {
        rawValue.bind(to: statement, at: index)
    }

    @inlinable
    public static func decode(from statement: OpaquePointer, at index: Int32) -> ChatList {
        guard let text = sqlite3_column_text(statement, index), sqlite3_column_bytes(statement, index) == 7 else {
            return .main
        }
        // "archive", compared without making a String.
        let archive: (UInt8, UInt8, UInt8, UInt8, UInt8, UInt8, UInt8) = (0x61, 0x72, 0x63, 0x68, 0x69, 0x76, 0x65)
        let isArchive = withUnsafeBytes(of: archive) { archive in
            (0..<7).allSatisfy { text[$0] == archive[$0] }
        }
        return isArchive ? .archive : .main
    }
}
