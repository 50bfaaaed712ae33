use std::io::BufRead;
fn main() {
    let dir = std::env::args().nth(1).unwrap();
    let enc = waypoint_embed::Encoder::load(std::path::Path::new(&dir)).unwrap();
    for line in std::io::stdin().lock().lines() {
        let v = enc.embed(&line.unwrap()).unwrap();
        println!(
            "{}",
            v.iter()
                .map(|x| format!("{x:.5}"))
                .collect::<Vec<_>>()
                .join(" ")
        );
    }
}
