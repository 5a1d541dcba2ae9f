import SQLite

/// One step of the schema's history. The list only grows: a released step never changes.
struct Migration: Sendable {
    var version: Int
    var sql: String
}

extension ChatDatabase {
    /// Every schema version, oldest first. `PRAGMA user_version` holds the version of a database.
    static let migrations: [Migration] = [
        Migration(version: 1, sql: """
            CREATE TABLE chat (
                id TEXT NOT NULL PRIMARY KEY,
                title TEXT NOT NULL,
                created_at INTEGER NOT NULL,
                last_message_id TEXT,
                last_message_sender TEXT,
                last_message_text TEXT,
                last_message_sent_at INTEGER,
                last_message_date INTEGER NOT NULL,
                unread INTEGER NOT NULL DEFAULT 0,
                revision INTEGER NOT NULL
            );
            CREATE INDEX chat_list_order ON chat (last_message_date DESC, id ASC);
            CREATE TABLE message (
                id TEXT NOT NULL PRIMARY KEY,
                chat_id TEXT NOT NULL REFERENCES chat (id) ON DELETE CASCADE,
                sender TEXT NOT NULL,
                text TEXT NOT NULL,
                sent_at INTEGER NOT NULL,
                edited_at INTEGER,
                deleted INTEGER NOT NULL DEFAULT 0
            );
            CREATE INDEX message_page ON message (chat_id, sent_at DESC, id DESC);
            CREATE TABLE change_log (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                chat_id TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind IN ('create', 'update', 'remove'))
            );
            """),
        // The text a message was first posted with, so that a repeated post is recognised even
        // after an edit. Messages from version 1 keep their current text as the original.
        Migration(version: 2, sql: """
            ALTER TABLE message ADD COLUMN original_text TEXT;
            UPDATE message SET original_text = text;
            """),
        // Counts of chats and non-deleted messages kept per write by triggers (in the writing
        // transaction, whichever process writes), so that stats read one row instead of
        // counting the tables.
        Migration(version: 3, sql: """
            CREATE TABLE store_count (
                id INTEGER PRIMARY KEY CHECK (id = 0),
                chats INTEGER NOT NULL,
                messages INTEGER NOT NULL
            );
            INSERT INTO store_count (id, chats, messages)
                VALUES (0, (SELECT COUNT(*) FROM chat), (SELECT COUNT(*) FROM message WHERE deleted = 0));
            CREATE TRIGGER store_count_chat_insert AFTER INSERT ON chat
                BEGIN UPDATE store_count SET chats = chats + 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_chat_delete AFTER DELETE ON chat
                BEGIN UPDATE store_count SET chats = chats - 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_message_insert AFTER INSERT ON message WHEN NEW.deleted = 0
                BEGIN UPDATE store_count SET messages = messages + 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_message_delete AFTER DELETE ON message WHEN OLD.deleted = 0
                BEGIN UPDATE store_count SET messages = messages - 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_message_deleted AFTER UPDATE OF deleted ON message
                WHEN (OLD.deleted = 0) <> (NEW.deleted = 0)
                BEGIN UPDATE store_count SET messages = messages + (CASE WHEN NEW.deleted = 0 THEN 1 ELSE -1 END) WHERE id = 0; END;
            """),
        // Chat lists, pins and mute (every chat in `main`, unpinned, unmuted); the list order
        // index with the pin band; per-list counters kept up to date by every event; and which
        // messages are unread, so that deleting one decrements `unread`. A chat's newest
        // `unread` non-deleted messages (by arrival) are taken as its unread ones; a chat whose
        // `unread` counted deleted messages is corrected, with a new revision.
        Migration(version: 4, sql: """
            ALTER TABLE chat ADD COLUMN list TEXT NOT NULL DEFAULT 'main';
            ALTER TABLE chat ADD COLUMN pin_order INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE chat ADD COLUMN muted INTEGER NOT NULL DEFAULT 0;
            DROP INDEX chat_list_order;
            CREATE INDEX chat_list_order ON chat (list, pin_order DESC, last_message_date DESC, id ASC);
            ALTER TABLE message ADD COLUMN unread INTEGER NOT NULL DEFAULT 0;
            UPDATE message SET unread = 1 WHERE rowid IN (
                SELECT ranked.rowid FROM (
                    SELECT rowid, chat_id,
                        row_number() OVER (PARTITION BY chat_id ORDER BY rowid DESC) AS position
                    FROM message WHERE deleted = 0) AS ranked
                JOIN chat ON chat.id = ranked.chat_id
                WHERE ranked.position <= chat.unread);
            CREATE INDEX message_unread ON message (chat_id) WHERE unread = 1;
            CREATE TEMP TABLE unread_fix AS
                SELECT id, (SELECT COUNT(*) FROM message WHERE chat_id = chat.id AND unread = 1) AS unread
                FROM chat
                WHERE unread <> (SELECT COUNT(*) FROM message WHERE chat_id = chat.id AND unread = 1);
            INSERT INTO change_log (chat_id, kind) SELECT id, 'update' FROM unread_fix;
            UPDATE chat SET
                unread = (SELECT unread FROM unread_fix WHERE unread_fix.id = chat.id),
                revision = (SELECT MAX(sequence) FROM change_log)
            WHERE id IN (SELECT id FROM unread_fix);
            DROP TABLE unread_fix;
            CREATE TABLE list_counters (
                list TEXT NOT NULL PRIMARY KEY,
                total INTEGER NOT NULL,
                chats INTEGER NOT NULL,
                messages INTEGER NOT NULL,
                unmuted_chats INTEGER NOT NULL,
                unmuted_messages INTEGER NOT NULL
            );
            INSERT INTO list_counters VALUES ('main', 0, 0, 0, 0, 0), ('archive', 0, 0, 0, 0, 0);
            UPDATE list_counters SET
                total = (SELECT COUNT(*) FROM chat),
                chats = (SELECT COUNT(*) FROM chat WHERE unread > 0),
                messages = (SELECT COALESCE(SUM(unread), 0) FROM chat),
                unmuted_chats = (SELECT COUNT(*) FROM chat WHERE unread > 0),
                unmuted_messages = (SELECT COALESCE(SUM(unread), 0) FROM chat)
            WHERE list = 'main';
            """),
        // Change-log readers (daemons) and how far the log was pruned, so that the log stays
        // bounded and a reader that fell behind the pruning knows it (docs/PROTOCOL.md, The live feed).
        Migration(version: 5, sql: """
            CREATE TABLE change_log_reader (
                id TEXT NOT NULL PRIMARY KEY,
                sequence INTEGER NOT NULL,
                seen_at INTEGER NOT NULL
            );
            CREATE TABLE change_log_pruned (
                only INTEGER PRIMARY KEY CHECK (only = 1),
                sequence INTEGER NOT NULL
            );
            INSERT INTO change_log_pruned VALUES (1, 0);
            """),
        // Unread by arrival instead of a flag: a message carries the change-log sequence of its
        // post (`arrival`), a chat the sequence of its last read (`read_through`), and a message
        // is unread when it is not deleted and arrived after the read. A post then no longer
        // writes a leaf of a second per-chat index (`message_unread`, a random page per post: a
        // quarter of the pages a post writes), and reading a chat writes its row only. Messages
        // unread before this step arrive at 1, after every chat's read at 0. `message.unread`
        // stays (dropping a column rewrites the table) but is no longer kept.
        Migration(version: 6, sql: """
            ALTER TABLE chat ADD COLUMN read_through INTEGER NOT NULL DEFAULT 0;
            ALTER TABLE message ADD COLUMN arrival INTEGER NOT NULL DEFAULT 0;
            UPDATE message SET arrival = 1, unread = 0 WHERE unread = 1;
            DROP INDEX message_unread;
            """),
        // Users and memberships (docs/PROTOCOL.md, Users and sessions): the single user `me` is a member
        // of every chat, with the chat's unread count, read position, pin, list, mute and revision
        // as they were; the per-member fields leave the chat row, which keeps the shared ones.
        // A membership carries its chat's `last_message_date`, so that a user's list is one walk
        // of `membership_list_order`, which covers every membership field a row shows (a page
        // at an offset skips index entries only; the chat rows are read for the page alone). Revisions stay change-log sequences (never reused, even
        // when a member leaves and joins again). A change-log row with a `user_id` changed that
        // membership only; without one, every membership of the chat the row's sequence is the
        // revision of (a post, a rename, a removal). `chat_rowid` is a hint only (a VACUUM may
        // renumber the chat rows): the rowid the chat had when the membership was made, so that
        // a user's whole list matches its chat rows by rowid in one scan of the chat table.
        Migration(version: 7, sql: """
            CREATE TABLE user (
                id TEXT NOT NULL PRIMARY KEY,
                name TEXT NOT NULL,
                created_at INTEGER NOT NULL
            );
            INSERT INTO user (id, name, created_at) VALUES ('me', 'me', CAST(strftime('%s', 'now') AS INTEGER) * 1000);
            CREATE TABLE membership (
                chat_id TEXT NOT NULL REFERENCES chat (id) ON DELETE CASCADE,
                user_id TEXT NOT NULL REFERENCES user (id) ON DELETE CASCADE,
                list TEXT NOT NULL DEFAULT 'main',
                pin_order INTEGER NOT NULL DEFAULT 0,
                last_message_date INTEGER NOT NULL,
                unread INTEGER NOT NULL DEFAULT 0,
                read_through INTEGER NOT NULL,
                muted INTEGER NOT NULL DEFAULT 0,
                revision INTEGER NOT NULL,
                joined INTEGER NOT NULL,
                chat_rowid INTEGER,
                PRIMARY KEY (chat_id, user_id)
            ) WITHOUT ROWID;
            CREATE INDEX membership_list_order ON membership (user_id, list, pin_order DESC, last_message_date DESC, chat_id, unread, muted, revision, chat_rowid);
            INSERT INTO membership (chat_id, user_id, list, pin_order, last_message_date, unread, read_through, muted, revision, joined, chat_rowid)
                SELECT id, 'me', list, pin_order, last_message_date, unread, read_through, muted, revision, 0, rowid FROM chat;
            CREATE TABLE list_counter (
                user_id TEXT NOT NULL REFERENCES user (id) ON DELETE CASCADE,
                list TEXT NOT NULL,
                total INTEGER NOT NULL,
                chats INTEGER NOT NULL,
                messages INTEGER NOT NULL,
                unmuted_chats INTEGER NOT NULL,
                unmuted_messages INTEGER NOT NULL,
                PRIMARY KEY (user_id, list)
            ) WITHOUT ROWID;
            INSERT INTO list_counter SELECT 'me', list, total, chats, messages, unmuted_chats, unmuted_messages FROM list_counters;
            DROP TABLE list_counters;
            DROP INDEX chat_list_order;
            ALTER TABLE chat DROP COLUMN unread;
            ALTER TABLE chat DROP COLUMN revision;
            ALTER TABLE chat DROP COLUMN list;
            ALTER TABLE chat DROP COLUMN pin_order;
            ALTER TABLE chat DROP COLUMN muted;
            ALTER TABLE chat DROP COLUMN read_through;
            ALTER TABLE change_log ADD COLUMN user_id TEXT;
            """),
        // The change log's check of `kind` as three comparisons. SQLite (3.40, Debian 12's) codes
        // `kind IN` three constants as an ephemeral table built for every row inserted: 37,000
        // instructions, a seventh of a post's (Benchmarks/Results/store.md, 2026-11-29). SQLite
        // cannot change a CHECK in place, so the table is rebuilt (the retained entries, about
        // `changeLogRetention`), and AUTOINCREMENT's high-water mark carried over: sequences are
        // never reused, even those of pruned entries.
        Migration(version: 8, sql: """
            CREATE TEMP TABLE change_log_high_water AS SELECT seq FROM sqlite_sequence WHERE name = 'change_log';
            CREATE TABLE change_log_new (
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                chat_id TEXT NOT NULL,
                kind TEXT NOT NULL CHECK (kind = 'create' OR kind = 'update' OR kind = 'remove'),
                user_id TEXT
            );
            INSERT INTO change_log_new (sequence, chat_id, kind, user_id) SELECT sequence, chat_id, kind, user_id FROM change_log;
            DROP TABLE change_log;
            ALTER TABLE change_log_new RENAME TO change_log;
            DELETE FROM sqlite_sequence WHERE name = 'change_log';
            INSERT INTO sqlite_sequence (name, seq) SELECT 'change_log', seq FROM change_log_high_water;
            DROP TABLE change_log_high_water;
            """),
        // A posted message is counted once per transaction by the store's code
        // (`ChatDatabase.countPostedMessages`), not by a trigger per row: SQLite runs a trigger as
        // a sub-program for every message inserted, 23,000 instructions a post, an eighth of it
        // (Benchmarks/Results/store.md, 2026-11-29). The other counting triggers stay: their
        // writes (chats made and removed, messages deleted) are rare.
        Migration(version: 9, sql: """
            DROP TRIGGER store_count_message_insert;
            """),
        // A list's unread counters are summed from its memberships when the store is asked for
        // them (`ChatDatabase.counters(of:user:)`: one walk of the user's covering list-order
        // index), no longer kept by every write: a post to M members wrote M counter rows (an
        // upsert each, half a post's cost at 1,000 members: Benchmarks/Results/store.md,
        // 2026-12-06). A live user's lists keep their counters in memory, as before; `total`
        // stays, kept by the writes that add, move or remove memberships.
        Migration(version: 10, sql: """
            ALTER TABLE list_counter DROP COLUMN chats;
            ALTER TABLE list_counter DROP COLUMN messages;
            ALTER TABLE list_counter DROP COLUMN unmuted_chats;
            ALTER TABLE list_counter DROP COLUMN unmuted_messages;
            """),
        // A post writes no index entry: the list-order index loses the columns a post changes
        // (the order date, unread, revision) and those a read or a mute changes. Its entries
        // moved on every post, one per member — a page deleted from and a page inserted into
        // for each: 27.7 pages a post to a chat of 10 members in a store of 10,000 users, 1.2
        // without (Benchmarks/Results/store.md, 2026-12-06) — and a quarter of the random pages
        // a post writes to a store of 1,000,000 chats of one user. What stays (user, list, pin
        // band, chat) changes only when a chat is pinned, moved or joined: it finds a user's
        // memberships, list by list, and the pinned ones first. A user's list is ordered by
        // date when it is read (`ChatDatabase.allChats(of:)` sorts it; a page sorts its list).
        // The number of memberships, kept by triggers (memberships come and go rarely), tells
        // whether a user's list is read faster by a scan of the table (`membershipAccess`).
        Migration(version: 11, sql: """
            DROP INDEX membership_list_order;
            CREATE INDEX membership_user ON membership (user_id, list, pin_order DESC, chat_id);
            ALTER TABLE store_count ADD COLUMN memberships INTEGER NOT NULL DEFAULT 0;
            UPDATE store_count SET memberships = (SELECT COUNT(*) FROM membership) WHERE id = 0;
            CREATE TRIGGER store_count_membership_insert AFTER INSERT ON membership
                BEGIN UPDATE store_count SET memberships = memberships + 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_membership_delete AFTER DELETE ON membership
                BEGIN UPDATE store_count SET memberships = memberships - 1 WHERE id = 0; END;
            """),
        // A post writes no chat row: the chat's last message is its latest non-deleted message by
        // (sentAt, id), the rule posts and deletes have always kept it by, and is read from the
        // message index (`message_page`, first entry of the chat) when a chat is read; its order
        // date is in every membership, which the post writes anyway (or, for a chat without
        // members, that message's sentAt, or the chat's creation). The chat row held copies of
        // both and was a random page of its own that every post wrote: a third of the random
        // pages a post to a store of 1,000,000 chats of one user writes
        // (Benchmarks/Results/daemon.md, 2026-12-06). An edit of the last message changes the
        // message row alone.
        Migration(version: 12, sql: """
            ALTER TABLE chat DROP COLUMN last_message_id;
            ALTER TABLE chat DROP COLUMN last_message_sender;
            ALTER TABLE chat DROP COLUMN last_message_text;
            ALTER TABLE chat DROP COLUMN last_message_sent_at;
            ALTER TABLE chat DROP COLUMN last_message_date;
            """),
        // A post writes one random page, its chat's memberships: a chat's history is a chain
        // instead of a leaf of the (chat, sentAt, id) index `message_page`, which every post
        // wrote (half the random pages a post writes to a store of 1,000,000 chats of one user:
        // Benchmarks/Results/daemon.md, 2026-12-06). Each message holds the `seq` of the one before
        // it in its chat by (sentAt, id), deleted or not (`previous`); each membership the chat's
        // newest (`head`) and its last message, the newest not deleted (`last`); the chat row
        // holds both only while the chat has no members (kept so by the two triggers). `seq` is
        // an INTEGER PRIMARY KEY, so that no VACUUM renumbers the chain: the table is rebuilt,
        // with the rowids it had. Messages lose their foreign key: a chat's removal deletes them
        // by walking its chain (a cascade would scan the table, which has no index by chat).
        // Every message whose `seq` is a multiple of `markInterval` is a mark (`message_mark`:
        // chat, sentAt, id), from which a walk to a position by date starts, so that no walk
        // passes more than about that many messages. `message.unread`, unused since version 6,
        // goes with the rebuild.
        Migration(version: 13, sql: """
            ALTER TABLE membership ADD COLUMN head INTEGER;
            ALTER TABLE membership ADD COLUMN last INTEGER;
            ALTER TABLE chat ADD COLUMN head INTEGER;
            ALTER TABLE chat ADD COLUMN last INTEGER;
            UPDATE membership SET
                head = (SELECT rowid FROM message WHERE chat_id = membership.chat_id ORDER BY sent_at DESC, id DESC LIMIT 1),
                last = (SELECT rowid FROM message WHERE chat_id = membership.chat_id AND deleted = 0 ORDER BY sent_at DESC, id DESC LIMIT 1);
            UPDATE chat SET
                head = (SELECT rowid FROM message WHERE chat_id = chat.id ORDER BY sent_at DESC, id DESC LIMIT 1),
                last = (SELECT rowid FROM message WHERE chat_id = chat.id AND deleted = 0 ORDER BY sent_at DESC, id DESC LIMIT 1)
            WHERE NOT EXISTS (SELECT 1 FROM membership WHERE chat_id = chat.id);
            CREATE TABLE message_chain (
                seq INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE,
                chat_id TEXT NOT NULL,
                sender TEXT NOT NULL,
                text TEXT NOT NULL,
                original_text TEXT,
                sent_at INTEGER NOT NULL,
                edited_at INTEGER,
                deleted INTEGER NOT NULL DEFAULT 0,
                arrival INTEGER NOT NULL DEFAULT 0,
                previous INTEGER
            );
            INSERT INTO message_chain (seq, id, chat_id, sender, text, original_text, sent_at, edited_at, deleted, arrival, previous)
                SELECT rowid, id, chat_id, sender, text, original_text, sent_at, edited_at, deleted, arrival,
                    lag(rowid) OVER (PARTITION BY chat_id ORDER BY sent_at, id)
                FROM message ORDER BY rowid;
            DROP TABLE message;
            ALTER TABLE message_chain RENAME TO message;
            CREATE TRIGGER store_count_message_delete AFTER DELETE ON message WHEN OLD.deleted = 0
                BEGIN UPDATE store_count SET messages = messages - 1 WHERE id = 0; END;
            CREATE TRIGGER store_count_message_deleted AFTER UPDATE OF deleted ON message
                WHEN (OLD.deleted = 0) <> (NEW.deleted = 0)
                BEGIN UPDATE store_count SET messages = messages + (CASE WHEN NEW.deleted = 0 THEN 1 ELSE -1 END) WHERE id = 0; END;
            CREATE TABLE message_mark (
                chat_id TEXT NOT NULL,
                sent_at INTEGER NOT NULL,
                id TEXT NOT NULL,
                seq INTEGER NOT NULL,
                PRIMARY KEY (chat_id, sent_at, id)
            ) WITHOUT ROWID;
            INSERT INTO message_mark SELECT chat_id, sent_at, id, seq FROM message WHERE seq % \(markInterval) = 0;
            CREATE TRIGGER chat_history_to_first_member AFTER INSERT ON membership
                WHEN (SELECT head FROM chat WHERE id = NEW.chat_id) IS NOT NULL
                BEGIN
                    UPDATE membership SET
                        head = (SELECT head FROM chat WHERE id = NEW.chat_id), last = (SELECT last FROM chat WHERE id = NEW.chat_id)
                    WHERE chat_id = NEW.chat_id;
                    UPDATE chat SET head = NULL, last = NULL WHERE id = NEW.chat_id;
                END;
            CREATE TRIGGER chat_history_from_last_member AFTER DELETE ON membership
                WHEN NOT EXISTS (SELECT 1 FROM membership WHERE chat_id = OLD.chat_id)
                BEGIN UPDATE chat SET head = OLD.head, last = OLD.last WHERE id = OLD.chat_id; END;
            """),
    ]

    static var latestSchemaVersion: Int { migrations.last!.version }

    /// Brings the schema to `latestSchemaVersion`, one transaction per step.
    static func migrate(_ db: Database, upTo target: Int = latestSchemaVersion) throws {
        // An up-to-date file opens without waiting for the write lock.
        if try schemaVersion(db) == target { return }
        while true {
            let done = try db.inTransaction(.immediate) { () throws -> Bool in
                let version = try schemaVersion(db)
                if version > latestSchemaVersion {
                    throw ChatStoreError.schemaTooNew(path: db.path, version: version, supported: latestSchemaVersion)
                }
                guard version < target, let step = migrations.first(where: { $0.version > version }) else {
                    return true
                }
                try db.execute(step.sql)
                try db.execute("PRAGMA user_version = \(step.version)")
                return false
            }
            if done { return }
        }
    }

    static func schemaVersion(_ db: Database) throws -> Int {
        try db.cachedStatement("PRAGMA user_version").fetchValue(Int.self) ?? 0
    }
}
