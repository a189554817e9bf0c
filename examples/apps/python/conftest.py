# Puts this folder on sys.path (rootdir conftest) so the tests import chat_service as the app does.
