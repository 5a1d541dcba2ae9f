print("chatfeed: not built yet")
