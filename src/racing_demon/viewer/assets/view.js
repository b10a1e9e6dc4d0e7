// The page's rendering (helper C's view.js replaces this at merge): the verdict and every
// record in words, from the embedded data.
const data = JSON.parse(document.getElementById("rd-data").textContent);
const verdict = document.getElementById("rd-verdict");
verdict.dataset.verdict = data.verdict.verdict;
verdict.textContent = `${data.source}: ${data.verdict.verdict}`;
if (data.failure) {
  const failure = document.getElementById("rd-failure");
  failure.hidden = false;
  failure.textContent = `record ${data.failure.seq}: ${data.failure.code}: ${data.failure.message}`;
}
const list = document.getElementById("rd-records");
for (const record of data.records) {
  const item = document.createElement("li");
  item.value = record.seq;
  item.textContent = record.text;
  list.append(item);
}
if (data.log) {
  RDCheck.gunzip(data.log.data).then((bytes) => {
    verdict.title = `${bytes.length} bytes of log embedded`;
  });
}
