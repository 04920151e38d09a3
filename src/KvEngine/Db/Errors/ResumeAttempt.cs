namespace KvEngine.Db.Errors;

/// <summary>One attempt to leave the background-error state; false with the error that stopped it.</summary>
internal delegate bool ResumeAttempt(out Exception? failure);
