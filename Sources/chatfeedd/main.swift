print("chatfeedd: not built yet")
